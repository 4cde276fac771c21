#include "checkpoint_store.hpp"

#include <fmt/format.h>

#include <fstream>
#include <string>

#include "../mpi_session.hpp"
#include "fault_injection.hpp"
#include "lowcomm/error.hpp"
#include "lowcomm/log/checkpoint_file.hpp"

namespace lowcomm::cli {

CheckpointStore::CheckpointStore(std::filesystem::path run_dir, const ControlChannel& control)
    : dir_(std::move(run_dir) / "checkpoints"), control_(control) {}

std::filesystem::path CheckpointStore::step_dir(std::int64_t step) const {
  return dir_ / fmt::format("step-{:08d}", step);
}

void CheckpointStore::save(std::int64_t step, const StateDict& state) const {
  on_rank_zero_agreed(control_, [&] { std::filesystem::create_directories(step_dir(step)); });
  agree_on_failure(control_, [&] {
    write_checkpoint(step_dir(step) / fmt::format("rank-{:04d}.h5", control_.rank()), state);
  });
  fault_point("rank-files-written", step, control_.rank());
  on_rank_zero_agreed(control_, [&] {
    const std::filesystem::path latest = dir_ / "latest", partial = dir_ / "latest.partial";
    {
      std::ofstream out(partial, std::ios::trunc);
      out << step << "\n";
      if (!out.flush()) throw LogError(fmt::format("cannot write {}", partial.string()));
    }
    std::filesystem::rename(partial, latest);
    fault_point("latest-committed", step, control_.rank());
    for (const auto& entry : std::filesystem::directory_iterator(dir_)) {
      const std::string name = entry.path().filename().string();
      if (entry.is_directory() && name.starts_with("step-") && entry.path() != step_dir(step)) {
        std::filesystem::remove_all(entry.path());
      }
    }
  });
}

std::optional<std::int64_t> CheckpointStore::latest() const {
  std::int64_t step = -1;
  on_rank_zero_agreed(control_, [&] {
    std::ifstream in(dir_ / "latest");
    if (!in) return;
    if (!(in >> step) || step < 0) {
      throw LogError(fmt::format("{} does not hold a step number: remove the checkpoints folder to "
                                 "start over", (dir_ / "latest").string()));
    }
  });
  step = control_.broadcast(step);
  return step < 0 ? std::nullopt : std::optional(step);
}

StateDict CheckpointStore::load(std::int64_t step) const {
  const std::filesystem::path file = step_dir(step) / fmt::format("rank-{:04d}.h5", control_.rank());
  if (!std::filesystem::exists(file)) {
    throw LogError(fmt::format("checkpoint {} is missing: a run resumes with the number of ranks it "
                               "was started with", file.string()));
  }
  return read_checkpoint(file);
}

}  // namespace lowcomm::cli
