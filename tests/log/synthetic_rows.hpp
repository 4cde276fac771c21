#pragma once
// Deterministic rows that the writer child, the tests and read_with_h5py.py agree on: in the
// "steps" row of step s, Float64 column number k (in schema order) holds s + k / 8 (exact in
// binary), except loss = 1 / (s + 1); tokens = 4096 s; bytes_sent[r] = 100 s + r;
// bytes_received[r] = 100 s + 50 + r; present[r] = (s + r) mod 2. An "eval" row follows steps
// 9, 19, 29...: val_loss = 2 / (s + 1).
#include <cstdint>
#include <vector>

#include "lowcomm/log/run_log.hpp"

namespace lowcomm::test {

inline constexpr int kSyntheticWorldSize = 3;

inline double synthetic_float(std::size_t column_index, std::int64_t step) {
  return static_cast<double>(step) + static_cast<double>(column_index) / 8.0;
}

inline double synthetic_loss(std::int64_t step) { return 1.0 / static_cast<double>(step + 1); }

inline double synthetic_val_loss(std::int64_t step) {
  return 2.0 / static_cast<double>(step + 1);
}

inline std::int64_t synthetic_bytes(std::int64_t step, int rank, bool received) {
  return 100 * step + (received ? 50 : 0) + rank;
}

inline std::int64_t synthetic_present(std::int64_t step, int rank) { return (step + rank) % 2; }

inline RowValues synthetic_step_row(const RunLog& log, std::int64_t step) {
  std::vector<std::int64_t> sent, received, present;
  for (int rank = 0; rank < kSyntheticWorldSize; ++rank) {
    sent.push_back(synthetic_bytes(step, rank, false));
    received.push_back(synthetic_bytes(step, rank, true));
    present.push_back(synthetic_present(step, rank));
  }
  RowValues row = log.row("steps");
  const std::vector<Column> columns = training_log_schema(kSyntheticWorldSize).tables[0].columns;
  for (std::size_t k = 0; k < columns.size(); ++k) {
    if (columns[k].type == ColumnType::Float64) row.set(columns[k].name, synthetic_float(k, step));
  }
  row.set("step", step)
      .set("loss", synthetic_loss(step))
      .set("tokens", std::int64_t{4096} * step)
      .set("bytes_sent", sent)
      .set("bytes_received", received)
      .set("present", present);
  return row;
}

inline RowValues synthetic_eval_row(const RunLog& log, std::int64_t step) {
  return log.row("eval").set("step", step).set("val_loss", synthetic_val_loss(step));
}

// Writes the step row and, every 10th step, the eval row.
inline void write_synthetic_step(RunLog& log, std::int64_t step) {
  log.write_row(synthetic_step_row(log, step));
  if (step % 10 == 9) log.write_row(synthetic_eval_row(log, step));
}

}  // namespace lowcomm::test
