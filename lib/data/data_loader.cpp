#include "lowcomm/data/data_loader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <utility>

#include "lowcomm/error.hpp"
#include "lowcomm/core/splitmix.hpp"

namespace lowcomm {


namespace {

constexpr std::uint64_t kTrainSalt = 0x747261696e;  // "train"

__extension__ typedef unsigned __int128 uint128;  // a*i mod n without overflow for any n

}  // namespace

DataLoader::DataLoader(TokenBuffer train, TokenBuffer val, LoaderOptions options)
    : train_(std::move(train)), val_(std::move(val)), options_(options) {
  const std::int64_t b = options.batch_size, t = options.seq_len, w = options.world_size;
  if (b < 1) throw ConfigError(fmt::format("data.batch_size = {} must be at least 1", b));
  if (t < 1) throw ConfigError(fmt::format("data.seq_len = {} must be at least 1", t));
  if (w < 1 || options.rank < 0 || options.rank >= w) {
    throw Error(fmt::format("rank {} of {} ranks is not a rank", options.rank, w));
  }
  if (options.val_windows < 0) {
    throw ConfigError(fmt::format("data.val_windows = {} must not be negative", options.val_windows));
  }
  const auto n_train = static_cast<std::int64_t>(train_.size());
  const std::int64_t part = n_train / w;
  part_begin_ = part * options.rank;
  part_end_ = part_begin_ + part;
  windows_per_epoch_ = part >= t ? (part - t) / t : 0;
  if (windows_per_epoch_ < 1) {
    throw ConfigError(fmt::format(
        "the training data ({}) holds {} tokens: each of the {} ranks gets {}, fewer than the "
        "2 x data.seq_len = {} a rank needs (one window of seq_len + 1 tokens at any of seq_len "
        "offsets): use more data, fewer ranks or a smaller data.seq_len",
        train_.name(), n_train, w, part, 2 * t));
  }

  const auto n_val = static_cast<std::int64_t>(val_.size());
  const std::int64_t available = n_val > t ? (n_val - 1) / t : 0;
  const std::int64_t total = std::min(options.val_windows, available) / w * w;
  if (options.val_windows > 0 && total == 0 && options.val_windows < w && available >= w) {
    // The data holds enough; the windows asked for are too few to give every rank one.
    throw ConfigError(fmt::format("data.val_windows = {} is fewer than the {} ranks that must share the "
                                  "validation windows equally: set data.val_windows to at least {} (or 0 for "
                                  "no validation)",
                                  options.val_windows, w, w));
  }
  if (options.val_windows > 0 && total == 0) {
    throw ConfigError(fmt::format(
        "the validation data ({}) holds {} tokens, {} windows of data.seq_len + 1 = {} tokens: "
        "fewer than the {} ranks that must share them equally: use more validation data, a "
        "smaller data.seq_len, or data.val_windows = 0 for no validation", val_.name(), n_val,
        available, t + 1, w));
  }
  val_per_rank_ = total / w;
}

Window DataLoader::train_window(std::int64_t step, std::int64_t row) const {
  if (step < 0 || row < 0 || row >= options_.batch_size) {
    throw Error(fmt::format("no training window for step {} row {} (batch size {})", step, row,
                            options_.batch_size));
  }
  const auto n = static_cast<std::uint64_t>(windows_per_epoch_);
  const auto g = static_cast<std::uint64_t>(step) * static_cast<std::uint64_t>(options_.batch_size) +
                 static_cast<std::uint64_t>(row);
  const std::uint64_t epoch = g / n, i = g % n;
  std::uint64_t rng = mix_seed({options_.seed, kTrainSalt, static_cast<std::uint64_t>(options_.rank),
                                static_cast<std::uint64_t>(options_.world_size), epoch});
  const std::uint64_t offset = uniform_below(rng, static_cast<std::uint64_t>(options_.seq_len));
  std::uint64_t a = 1 + uniform_below(rng, n);  // in [1, n]; n = 1 gives the identity
  while (std::gcd(a, n) != 1) a = a % n + 1;
  const std::uint64_t c = uniform_below(rng, n);
  const auto j = static_cast<std::uint64_t>((static_cast<uint128>(a) * i + c) % n);
  return {part_begin_ + static_cast<std::int64_t>(offset + j * static_cast<std::uint64_t>(options_.seq_len))};
}

void DataLoader::fill_row(const TokenBuffer& from, std::int64_t start, Batch& batch,
                          std::int64_t row) const {
  const auto tokens = from.tokens().subspan(static_cast<std::size_t>(start),
                                            static_cast<std::size_t>(options_.seq_len + 1));
  const auto t = static_cast<std::size_t>(options_.seq_len);
  const std::size_t base = static_cast<std::size_t>(row) * t;
  for (std::size_t k = 0; k < t; ++k) {
    batch.tokens[base + k] = tokens[k];
    batch.targets[base + k] = tokens[k + 1];
  }
}

Batch DataLoader::train_batch(std::int64_t step) const {
  Batch batch{.rows = options_.batch_size, .seq_len = options_.seq_len, .tokens = {}, .targets = {}};
  const auto cells = static_cast<std::size_t>(batch.rows * batch.seq_len);
  batch.tokens.resize(cells);
  batch.targets.resize(cells);
  for (std::int64_t row = 0; row < batch.rows; ++row) {
    fill_row(train_, train_window(step, row).start, batch, row);
  }
  return batch;
}

std::int64_t DataLoader::val_batch_count() const {
  return (val_per_rank_ + options_.batch_size - 1) / options_.batch_size;
}

Window DataLoader::val_window(std::int64_t i) const {
  if (i < 0 || i >= val_per_rank_) {
    throw Error(fmt::format("validation window {} of rank {}: it holds {}", i, options_.rank,
                            val_per_rank_));
  }
  return {(i * options_.world_size + options_.rank) * options_.seq_len};
}

Batch DataLoader::val_batch(std::int64_t index) const {
  if (index < 0 || index >= val_batch_count()) {
    throw Error(fmt::format("validation batch {} does not exist: there are {}", index,
                            val_batch_count()));
  }
  const std::int64_t first = index * options_.batch_size;
  Batch batch{.rows = std::min(options_.batch_size, val_per_rank_ - first),
              .seq_len = options_.seq_len, .tokens = {}, .targets = {}};
  const auto cells = static_cast<std::size_t>(batch.rows * batch.seq_len);
  batch.tokens.resize(cells);
  batch.targets.resize(cells);
  for (std::int64_t row = 0; row < batch.rows; ++row) {
    fill_row(val_, val_window(first + row).start, batch, row);
  }
  return batch;
}

}  // namespace lowcomm
