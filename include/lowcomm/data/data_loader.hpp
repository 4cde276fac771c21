#pragma once
// Training and validation batches for one rank, computed directly from (seed, rank, world_size,
// step): no state carries from one step to the next, so a run resumed at step s reads exactly
// the batches the uninterrupted run would have read (bitwise identical), and any rank's batch
// can be recomputed anywhere (the tests check disjointness that way, without MPI).
//
// Training: the training tokens are cut into world_size contiguous, equal parts (the last
// N mod W tokens unused); rank r only ever reads part r, so ranks never see the same tokens in
// the same epoch or any other. Within its part a rank reads windows of seq_len + 1 tokens
// (inputs are tokens [0, T), targets tokens [1, T]) that start at offset + j*T, j in [0, n),
// n = floor((part - T) / T); consecutive windows share one token, as in llm.c. Row b of step s is
// the g-th window the rank reads, g = s*B + b: epoch e = g / n and slot j = perm_e(g mod n), where
// perm_e is a seeded affine permutation of [0, n) (j -> (a*i + c) mod n, gcd(a, n) = 1) and offset
// in [0, T) is also drawn per epoch, so that every epoch visits every window once, in a new order
// and with shifted boundaries. a, c and offset come from SplitMix64 of (seed, rank, epoch).
//
// Validation: a fixed set of K = floor(val_windows / W) * W windows (val_windows from the
// configuration, or fewer if the validation tokens hold fewer), window i starting at i*T of the
// validation tokens, dealt to ranks round robin (rank r gets windows r, r+W, ...). Every rank
// holds the same number, K / W, so the mean over ranks of each rank's mean loss is the mean loss
// over all K windows. The set depends only on val_windows and W, not on the seed or the step, so
// evaluations at different steps (and runs with different seeds) compare like with like; it is
// the same for every W that divides val_windows.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lowcomm/data/token_buffer.hpp"

namespace lowcomm {

// B x T int32 row-major: tokens[b*T + t] is the input at position t of row b, targets[b*T + t]
// the token that follows it.
struct Batch {
  std::int64_t rows = 0;     // B (a last validation batch may have fewer)
  std::int64_t seq_len = 0;  // T
  std::vector<std::int32_t> tokens;
  std::vector<std::int32_t> targets;
};

struct LoaderOptions {
  std::int64_t batch_size = 8;   // B, rows per rank and step
  std::int64_t seq_len = 256;    // T
  std::uint64_t seed = 0;        // the order of training windows
  int rank = 0;
  int world_size = 1;
  std::int64_t val_windows = 128;  // K before rounding down to a multiple of world_size
};

// Where one window lies in its stream, for tests and diagnostics: tokens [start, start + T].
struct Window {
  std::int64_t start = 0;
};

class DataLoader {
 public:
  // Throws lowcomm::ConfigError when the options are out of range or a rank's part of the
  // training tokens is too short for one window, naming the sizes and what to change.
  DataLoader(TokenBuffer train, TokenBuffer val, LoaderOptions options);

  Batch train_batch(std::int64_t step) const;
  // The window of row `row` at `step` (what train_batch reads).
  Window train_window(std::int64_t step, std::int64_t row) const;
  std::int64_t windows_per_epoch() const { return windows_per_epoch_; }  // n, per rank
  // Tokens of training data per rank: [part_begin, part_end) of the training buffer.
  std::int64_t part_begin() const { return part_begin_; }
  std::int64_t part_end() const { return part_end_; }

  std::int64_t val_windows_per_rank() const { return val_per_rank_; }
  std::int64_t val_batch_count() const;  // ceil(val_windows_per_rank / B)
  Batch val_batch(std::int64_t index) const;  // index in [0, val_batch_count())
  Window val_window(std::int64_t i) const;    // i-th of this rank's windows

  const LoaderOptions& options() const { return options_; }
  const TokenBuffer& train_tokens() const { return train_; }
  const TokenBuffer& val_tokens() const { return val_; }

 private:
  void fill_row(const TokenBuffer& from, std::int64_t start, Batch& batch, std::int64_t row) const;

  TokenBuffer train_, val_;
  LoaderOptions options_;
  std::int64_t part_begin_ = 0, part_end_ = 0, windows_per_epoch_ = 0, val_per_rank_ = 0;
};

}  // namespace lowcomm
