#pragma once
// Where a run's checkpoints live: DIR/checkpoints/step-<S>/rank-<r>.h5, one StateDict per rank
// (checkpoint_file.hpp), and DIR/checkpoints/latest, a text file naming the last complete step.
// `latest` is replaced (written aside, renamed) only after every rank has written its file, and
// older steps are removed after that, so a run killed at any moment keeps one whole checkpoint.
// The caller makes its log durable up to the step first (Trainer::save_checkpoint), so a
// checkpoint never becomes `latest` ahead of the log rows before it.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <vector>

#include "lowcomm/comm/control_channel.hpp"
#include "lowcomm/core/state_dict.hpp"

namespace lowcomm::cli {

class CheckpointStore {
 public:
  CheckpointStore(std::filesystem::path run_dir, const ControlChannel& control);

  // Collective: every rank writes its state for resuming at `step`, which becomes `latest`; then
  // the checkpoints beyond the newest `keep` are removed (none with keep = 0). Throws LogError
  // (agreed on all ranks) when a file cannot be written.
  void save(std::int64_t step, const StateDict& state, std::int64_t keep) const;

  // Collective: the step of the last complete checkpoint, if any.
  std::optional<std::int64_t> latest() const;

  // Rank 0: the steps of the checkpoint folders present, ascending.
  std::vector<std::int64_t> steps() const;

  // Collective, for --resume-from: makes `step` (one of steps()) latest again and removes the
  // checkpoints after it, which belong to the abandoned continuation. Throws ConfigError listing
  // the steps kept when it is not one of them.
  void rewind_to(std::int64_t step) const;

  // The state of `rank` (default: this rank) in the checkpoint at `step`. Throws LogError naming
  // the file when it is missing (was the run started with another number of ranks?) or unreadable.
  StateDict load(std::int64_t step, std::optional<int> rank = std::nullopt) const;

  std::filesystem::path folder() const { return dir_; }

 private:
  std::filesystem::path step_dir(std::int64_t step) const;
  void write_latest(std::int64_t step) const;  // rank 0: written aside, then renamed
  std::filesystem::path dir_;
  const ControlChannel& control_;
};

}  // namespace lowcomm::cli
