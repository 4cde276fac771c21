#include "lowcomm/log/replay_output.hpp"

#include <fmt/format.h>

#include <system_error>

#include "lowcomm/error.hpp"

namespace lowcomm {

ReplayOutput::ReplayOutput(const std::filesystem::path& out, std::span<const TensorInfo> tensors, std::int64_t steps,
                           const RunMetadata& metadata, std::span<const std::int64_t> dense_bytes_sent)
    : out_(out), partial_(out.string() + ".partial"), tensors_(tensors.begin(), tensors.end()) {
  // The partial file is written in one go and never resumed: flush rarely.
  log_.emplace(RunLog::create(partial_, replay_log_schema(metadata.world_size, tensors, steps), metadata,
                              {.flush_every_rows = 1000, .flush_every_seconds = 60}, /*overwrite=*/true));
  remove_partial_ = true;
  log_->write_array("dense_bytes_sent", {}, dense_bytes_sent);
}

ReplayOutput::~ReplayOutput() {
  if (!remove_partial_) return;
  try {
    log_->close();
  } catch (const LogError&) {
    // The partial file goes anyway.
  }
  std::error_code ignored;
  std::filesystem::remove(partial_, ignored);
}

void ReplayOutput::write_params(std::int64_t row, int rank, std::span<const float> flat) {
  const std::int64_t total = total_numel(tensors_);
  if (flat.size() != static_cast<std::size_t>(total)) {
    throw Error(fmt::format("ReplayOutput::write_params: got {} values, the tensors hold {}", flat.size(), total));
  }
  const std::uint64_t leading[2] = {static_cast<std::uint64_t>(row), static_cast<std::uint64_t>(rank)};
  std::size_t offset = 0;
  for (const TensorInfo& tensor : tensors_) {
    const auto count = static_cast<std::size_t>(tensor.numel());
    log_->write_array("params/" + tensor.name, leading, flat.subspan(offset, count));
    offset += count;
  }
}

RowValues ReplayOutput::step_row() const { return log_->row("steps"); }

void ReplayOutput::write_step(const RowValues& row) { log_->write_row(row); }

void ReplayOutput::commit() {
  log_->close();
  std::error_code error;
  std::filesystem::rename(partial_, out_, error);
  if (error) {
    throw Error(fmt::format("replay output: cannot rename {} to {}: {}", partial_.string(), out_.string(),
                            error.message()));
  }
  remove_partial_ = false;
}

}  // namespace lowcomm
