#include "checkpoint_store.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <string>

#include "common/mpi_session.hpp"
#include "fault_injection.hpp"
#include "lowcomm/error.hpp"
#include "lowcomm/log/checkpoint_file.hpp"

namespace lowcomm::cli {

CheckpointStore::CheckpointStore(std::filesystem::path run_dir, const ControlChannel& control)
    : dir_(std::move(run_dir) / "checkpoints"), control_(control) {}

std::filesystem::path CheckpointStore::step_dir(std::int64_t step) const {
  return dir_ / fmt::format("step-{:08d}", step);
}

namespace {

// "step-00000050" -> 50, or nullopt for any other name.
std::optional<std::int64_t> step_of(const std::string& name) {
  if (!name.starts_with("step-") || name.size() <= 5) return std::nullopt;
  std::int64_t step = 0;
  for (const char c : name.substr(5)) {
    if (c < '0' || c > '9') return std::nullopt;
    step = step * 10 + (c - '0');
  }
  return step;
}

// About what a rank's checkpoint file takes on disk: its values, and a generous allowance for
// HDF5's headers and chunk indexes per entry and per file.
std::uintmax_t checkpoint_bytes(const StateDict& state) {
  constexpr std::uintmax_t kPerEntry = 4096, kPerFile = 1 << 16;
  std::uintmax_t bytes = kPerFile;
  for (const std::string& key : state.float_keys()) bytes += state.floats(key).size() * sizeof(float) + kPerEntry;
  bytes += state.integer_keys().size() * (sizeof(std::int64_t) + kPerEntry);
  return bytes;
}

// A checkpoint that cannot fit is refused before its file is created: HDF5 (1.10) cannot close a
// file whose writes failed on a full disk, and crashes at the process's exit.
void require_space_for(const std::filesystem::path& file, std::uintmax_t bytes) {
  std::error_code error;
  const std::uintmax_t available =
      test_free_bytes().value_or(std::filesystem::space(file.parent_path(), error).available);
  if (error || available >= bytes) return;  // a file system that cannot say: let the write tell
  throw LogError(fmt::format("checkpoint {}: needs about {:.1f} MB but its file system has {:.1f} MB free; free some "
                             "space, or move the run folder (--out) to a larger file system and --resume there",
                             file.string(), static_cast<double>(bytes) / 1e6, static_cast<double>(available) / 1e6));
}

}  // namespace

std::vector<std::int64_t> CheckpointStore::steps() const {
  std::vector<std::int64_t> found;
  std::error_code error;
  if (!std::filesystem::is_directory(dir_, error)) return found;
  for (const auto& entry : std::filesystem::directory_iterator(dir_)) {
    const auto step = step_of(entry.path().filename().string());
    if (entry.is_directory() && step) found.push_back(*step);
  }
  std::ranges::sort(found);
  return found;
}

void CheckpointStore::write_latest(std::int64_t step) const {
  const std::filesystem::path latest = dir_ / "latest", partial = dir_ / "latest.partial";
  {
    std::ofstream out(partial, std::ios::trunc);
    out << step << "\n";
    if (!out.flush()) throw LogError(fmt::format("cannot write {}", partial.string()));
  }
  std::filesystem::rename(partial, latest);
}

void CheckpointStore::rewind_to(std::int64_t step) const {
  on_rank_zero_agreed(control_, [&] {
    const std::vector<std::int64_t> kept = steps();
    if (std::ranges::find(kept, step) == kept.end()) {
      throw ConfigError(fmt::format("--resume-from {}: {} holds no checkpoint of that step; it holds {}", step,
                                    dir_.string(), kept.empty() ? "none" : fmt::format("steps {}", fmt::join(kept, ", "))));
    }
    write_latest(step);
    for (const std::int64_t later : kept) {
      if (later > step) std::filesystem::remove_all(step_dir(later));
    }
  });
}

void CheckpointStore::save(std::int64_t step, const StateDict& state, std::int64_t keep) const {
  on_rank_zero_agreed(control_, [&] { std::filesystem::create_directories(step_dir(step)); });
  try {
    agree_on_failure(control_, [&] {
      const std::filesystem::path file = step_dir(step) / fmt::format("rank-{:04d}.h5", control_.rank());
      require_space_for(file, checkpoint_bytes(state));
      write_checkpoint(file, state);
    });
  } catch (...) {
    // Every rank is done with the folder (the agreement is collective): no partial step is kept.
    if (control_.is_root()) {
      std::error_code ignored;
      std::filesystem::remove_all(step_dir(step), ignored);
    }
    throw;
  }
  fault_point("rank-files-written", step, control_.rank());
  on_rank_zero_agreed(control_, [&] {
    write_latest(step);
    fault_point("latest-committed", step, control_.rank());
    if (keep == 0) return;
    // The newest `keep`, counting this one: never a newer step than `step` (rewind_to removed those).
    const std::vector<std::int64_t> kept = steps();
    for (std::size_t i = 0; i + static_cast<std::size_t>(keep) < kept.size(); ++i) {
      if (kept[i] != step) std::filesystem::remove_all(step_dir(kept[i]));
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

StateDict CheckpointStore::load(std::int64_t step, std::optional<int> rank) const {
  const std::filesystem::path file = step_dir(step) / fmt::format("rank-{:04d}.h5", rank.value_or(control_.rank()));
  if (!std::filesystem::exists(file)) {
    throw LogError(fmt::format("checkpoint {} is missing: a run resumes with the number of ranks it "
                               "was started with", file.string()));
  }
  return read_checkpoint(file);
}

}  // namespace lowcomm::cli
