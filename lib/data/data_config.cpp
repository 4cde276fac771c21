#include "lowcomm/data/data_config.hpp"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <utility>

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

LoaderOptions loader_options(const Config& config, int rank, int world_size) {
  return {.batch_size = config.get_int("data.batch_size"),
          .seq_len = config.get_int("data.seq_len"),
          .seed = static_cast<std::uint64_t>(config.get_int("data.seed")),
          .rank = rank,
          .world_size = world_size,
          .val_windows = config.get_int("data.val_windows")};
}

std::string shard_path(const Config& config, std::string_view key) {
  const std::string& path = config.get_string(key);
  if (path.empty()) {
    throw ConfigError(fmt::format("data.source = shards needs {} (a token shard in llm.c's "
                                  "format): set it, e.g. --set {}=data/mine/{}.bin", key, key,
                                  key == "data.train" ? "train" : "val"));
  }
  return path;
}

}  // namespace

void add_data_keys(ConfigSchema& schema) {
  schema.string("data.source", "brown",
                "training data: brown (data.dir, made by `lowcomm prepare-data`), shards "
                "(data.train, data.val) or markov (synthetic, known loss floor)",
                {"brown", "shards", "markov"});
  schema.string("data.dir", "data/brown",
                "folder holding train.bin and val.bin of the prepared Brown corpus");
  schema.string("data.train", "", "training token shard (llm.c format) for data.source = shards");
  schema.string("data.val", "", "validation token shard (llm.c format) for data.source = shards");
  schema.integer("data.vocab_size", kByteVocabularySize,
                 "the model's vocabulary; every token must be below it (256: bytes)", 2, 65536);
  schema.integer("data.batch_size", 8, "rows per rank and step (B)", 1);
  schema.integer("data.seq_len", 128, "tokens per row (T; at most the model's context length)", 1);
  schema.integer("data.seed", 0, "seed of the order in which training windows are read", 0);
  schema.integer("data.val_windows", 128,
                 "validation windows over all ranks (rounded down to a multiple of the rank "
                 "count); 0: no validation", 0);
  schema.integer("data.markov.order", 1, "tokens of context of the synthetic chain", 1, 4);
  schema.integer("data.markov.seed", 0, "seed that chooses the synthetic chain", 0);
  schema.integer("data.markov.successors", 8,
                 "likely next tokens per context (the rest share data.markov.uniform_mix)", 1,
                 65536);
  schema.real("data.markov.uniform_mix", 0.01,
              "probability of a uniformly random next token, in (0, 1]", 0, 1);
  schema.integer("data.markov.train_tokens", std::int64_t{1} << 22,
                 "length of the generated training stream", 2, 2147483647.0);
  schema.integer("data.markov.val_tokens", std::int64_t{1} << 18,
                 "length of the generated validation stream", 2, 2147483647.0);
}

TrainingData make_training_data(const Config& config, int rank, int world_size) {
  const std::string& source = config.get_string("data.source");
  const auto vocab_size = static_cast<int>(config.get_int("data.vocab_size"));
  const LoaderOptions options = loader_options(config, rank, world_size);

  if (source == "markov") {
    const MarkovSpec spec{.vocab_size = vocab_size,
                          .order = static_cast<int>(config.get_int("data.markov.order")),
                          .successors = static_cast<int>(config.get_int("data.markov.successors")),
                          .uniform_mix = config.get_double("data.markov.uniform_mix"),
                          .seed = static_cast<std::uint64_t>(config.get_int("data.markov.seed"))};
    const MarkovSource chain(spec);
    TokenBuffer train = chain.generate_buffer(
        kTrainStream, static_cast<std::size_t>(config.get_int("data.markov.train_tokens")));
    TokenBuffer val = chain.generate_buffer(
        kValStream, static_cast<std::size_t>(config.get_int("data.markov.val_tokens")));
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
    const std::filesystem::path dir = config.get_string("data.dir");
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
    train_path = shard_path(config, "data.train");
    val_path = shard_path(config, "data.val");
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
