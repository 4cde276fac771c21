#pragma once
// The file `lowcomm replay` writes (docs/replay.md): a run log of replay_log_schema (the step
// table, the parameters on every rank after every step, the dense baseline's bytes). It is
// written to OUT.partial and renamed to OUT only by commit(), so a file named OUT is always a
// finished replay; an output destroyed uncommitted removes its partial file.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "lowcomm/core/tensor.hpp"
#include "lowcomm/log/run_log.hpp"
#include "lowcomm/log/run_metadata.hpp"

namespace lowcomm {

class ReplayOutput {
 public:
  // Creates OUT.partial (truncating one left by an earlier run) with every array sized for
  // `steps` steps of metadata.world_size ranks, and writes dense_bytes_sent (one per rank).
  // Throws LogError when the file cannot be created or written.
  ReplayOutput(const std::filesystem::path& out, std::span<const TensorInfo> tensors, std::int64_t steps,
               const RunMetadata& metadata, std::span<const std::int64_t> dense_bytes_sent);
  ~ReplayOutput();  // removes OUT.partial unless committed
  ReplayOutput(const ReplayOutput&) = delete;
  ReplayOutput& operator=(const ReplayOutput&) = delete;

  // Rank `rank`'s parameters after `row` steps (row 0: the initial values), all tensors
  // concatenated in the order given to the constructor.
  void write_params(std::int64_t row, int rank, std::span<const float> flat);

  // A row of the step table, and its writing.
  RowValues step_row() const;
  void write_step(const RowValues& row);

  // Closes the file, checking that its last writes succeeded, and renames it to OUT. Throws
  // LogError when they failed, Error when the rename does.
  void commit();

 private:
  std::filesystem::path out_, partial_;
  std::vector<TensorInfo> tensors_;
  std::optional<RunLog> log_;
  // Set once this output created OUT.partial, cleared by commit(): a partial file that another
  // process holds (the create failed) is not ours to remove.
  bool remove_partial_ = false;
};

}  // namespace lowcomm
