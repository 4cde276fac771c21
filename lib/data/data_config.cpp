#include "lowcomm/data/data_config.hpp"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <utility>

#include "lowcomm/config/options_schema.hpp"
#include "lowcomm/data/brown_corpus.hpp"
#include "lowcomm/data/byte_tokenizer.hpp"
#include "lowcomm/data/markov_source.hpp"
#include "lowcomm/data/token_shard.hpp"
#include "lowcomm/error.hpp"

namespace lowcomm {

namespace {

// Stream ids of the Markov source: the same chain, independent streams.
constexpr std::uint64_t kTrainStream = 0;
constexpr std::uint64_t kValStream = 1;

// data.* and data.markov.*, each declared once (config/options_schema.hpp).
struct DataOptions {
  std::string source = "brown";
  std::string dir = "data/brown";
  std::string train, val;
  std::int64_t vocab_size = kByteVocabularySize;
  std::int64_t batch_size = 8;
  std::int64_t seq_len = 128;
  std::int64_t seed = 0;
  std::int64_t val_windows = 128;
};

struct MarkovOptions {
  std::int64_t order = 1;
  std::int64_t seed = 0;
  std::int64_t successors = 8;
  double uniform_mix = 0.01;
  std::int64_t train_tokens = std::int64_t{1} << 22;
  std::int64_t val_tokens = std::int64_t{1} << 18;
};

const OptionsSchema<DataOptions>& data_schema() {
  static const auto schema =
      OptionsSchema<DataOptions>()
          .field("source", &DataOptions::source,
                 "training data: brown (data.dir, made by `lowcomm prepare-data`), shards (data.train, data.val) "
                 "or markov (synthetic, known loss floor)",
                 {.choices = {"brown", "shards", "markov"}})
          .field("dir", &DataOptions::dir, "folder holding train.bin and val.bin of the prepared Brown corpus")
          .field("train", &DataOptions::train, "training token shard (llm.c format) for data.source = shards")
          .field("val", &DataOptions::val, "validation token shard (llm.c format) for data.source = shards")
          .field("vocab_size", &DataOptions::vocab_size,
                 "the model's vocabulary; every token must be below it (256: bytes)", {.min = 2.0, .max = 65536.0})
          .field("batch_size", &DataOptions::batch_size, "rows per rank and step (B)", {.min = 1.0})
          .field("seq_len", &DataOptions::seq_len, "tokens per row (T; at most the model's context length)",
                 {.min = 1.0})
          .field("seed", &DataOptions::seed, "seed of the order in which training windows are read", {.min = 0.0})
          .field("val_windows", &DataOptions::val_windows,
                 "validation windows over all ranks (rounded down to a multiple of the rank count); 0: no "
                 "validation",
                 {.min = 0.0});
  return schema;
}

const OptionsSchema<MarkovOptions>& markov_schema() {
  static const auto schema =
      OptionsSchema<MarkovOptions>()
          .field("order", &MarkovOptions::order, "tokens of context of the synthetic chain", {.min = 1.0, .max = 4.0})
          .field("seed", &MarkovOptions::seed, "seed that chooses the synthetic chain", {.min = 0.0})
          .field("successors", &MarkovOptions::successors,
                 "likely next tokens per context (the rest share data.markov.uniform_mix)",
                 {.min = 1.0, .max = 65536.0})
          .field("uniform_mix", &MarkovOptions::uniform_mix,
                 "probability of a uniformly random next token, in (0, 1]", {.min = 0.0, .max = 1.0})
          .field("train_tokens", &MarkovOptions::train_tokens, "length of the generated training stream",
                 {.min = 2.0, .max = 2147483647.0})
          .field("val_tokens", &MarkovOptions::val_tokens, "length of the generated validation stream",
                 {.min = 2.0, .max = 2147483647.0});
  return schema;
}

LoaderOptions loader_options(const DataOptions& data, int rank, int world_size) {
  return {.batch_size = data.batch_size,
          .seq_len = data.seq_len,
          .seed = static_cast<std::uint64_t>(data.seed),
          .rank = rank,
          .world_size = world_size,
          .val_windows = data.val_windows};
}

std::string shard_path(const std::string& path, std::string_view key) {
  if (path.empty()) {
    throw ConfigError(fmt::format("data.source = shards needs {} (a token shard in llm.c's "
                                  "format): set it, e.g. --set {}=data/mine/{}.bin", key, key,
                                  key == "data.train" ? "train" : "val"));
  }
  return path;
}

}  // namespace

void add_data_keys(ConfigSchema& schema) {
  data_schema().add_to(schema, "data");
  markov_schema().add_to(schema, "data.markov");
}

TrainingData make_training_data(const Config& config, int rank, int world_size) {
  const DataOptions data = data_schema().read(config, "data");
  const std::string& source = data.source;
  const auto vocab_size = static_cast<int>(data.vocab_size);
  const LoaderOptions options = loader_options(data, rank, world_size);

  if (source == "markov") {
    const MarkovOptions markov = markov_schema().read(config, "data.markov");
    const MarkovSpec spec{.vocab_size = vocab_size,
                          .order = static_cast<int>(markov.order),
                          .successors = static_cast<int>(markov.successors),
                          .uniform_mix = markov.uniform_mix,
                          .seed = static_cast<std::uint64_t>(markov.seed)};
    const MarkovSource chain(spec);
    TokenBuffer train = chain.generate_buffer(kTrainStream, static_cast<std::size_t>(markov.train_tokens));
    TokenBuffer val = chain.generate_buffer(kValStream, static_cast<std::size_t>(markov.val_tokens));
    const double floor = chain.entropy_rate();
    // The validation floor is over the targets the loader actually evaluates: the windows'
    // tokens, each window's own context (conditional_entropy of each window, token-weighted).
    DataLoader loader(std::move(train), std::move(val), options);
    std::optional<double> val_floor;
    if (loader.val_windows_per_rank() > 0) {
      // Every rank computes the global set's floor (all K windows, not only its own share).
      const std::int64_t t = options.seq_len, k = loader.val_windows_per_rank() * world_size;
      double sum = 0;
      for (std::int64_t i = 0; i < k; ++i) {
        sum += chain.conditional_entropy(loader.val_tokens().tokens().subspan(
            static_cast<std::size_t>(i * t), static_cast<std::size_t>(t + 1)));
      }
      val_floor = sum / static_cast<double>(k);
    }
    std::string description = fmt::format(
        "markov: order {}, {} successors, uniform mix {}, seed {}, vocabulary {}; entropy rate "
        "{:.4f} nats/token (uniform: {:.4f})", spec.order, spec.successors, spec.uniform_mix,
        spec.seed, vocab_size, floor, std::log(static_cast<double>(vocab_size)));
    return {.loader = std::move(loader), .vocab_size = vocab_size,
            .description = std::move(description), .loss_floor = floor,
            .val_loss_floor = val_floor};
  }

  std::filesystem::path train_path, val_path;
  if (source == "brown") {
    if (vocab_size < kByteVocabularySize) {
      throw ConfigError(fmt::format("data.vocab_size = {} but the Brown corpus is byte-tokenised: "
                                    "it needs at least {}", vocab_size, kByteVocabularySize));
    }
    const std::filesystem::path dir = data.dir;
    const PreparedCorpus outputs = brown_corpus_outputs(dir);
    std::error_code error;
    if (!std::filesystem::exists(outputs.train, error) ||
        !std::filesystem::exists(outputs.val, error)) {
      throw ConfigError(fmt::format(
          "data.dir = {} holds no prepared Brown corpus (train.bin, val.bin): run `lowcomm "
          "prepare-data --out {}` first, or point data.dir at the folder it wrote", dir.string(),
          dir.string()));
    }
    train_path = outputs.train;
    val_path = outputs.val;
  } else if (source == "shards") {
    train_path = shard_path(data.train, "data.train");
    val_path = shard_path(data.val, "data.val");
  } else {
    throw ConfigError(fmt::format("data.source = {}: choose brown, shards or markov", source));
  }
  TokenBuffer train = read_token_shard(train_path, vocab_size);
  TokenBuffer val = read_token_shard(val_path, vocab_size);
  std::string description = fmt::format("{}: {} ({} tokens), {} ({} tokens), vocabulary {}",
                                        source, train_path.string(), train.size(),
                                        val_path.string(), val.size(), vocab_size);
  return {.loader = DataLoader(std::move(train), std::move(val), options),
          .vocab_size = vocab_size, .description = std::move(description), .loss_floor = {},
          .val_loss_floor = {}};
}

}  // namespace lowcomm
