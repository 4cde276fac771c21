#include "lowcomm/core/local_rank.hpp"

#include <array>
#include <charconv>
#include <cstdlib>

#include <fmt/format.h>

#include "lowcomm/error.hpp"

namespace lowcomm {

namespace {

// Launcher-specific variables before SLURM_LOCALID: under `srun --mpi=pmix` both are set and
// agree, while an mpirun inside an allocation inherits the batch step's SLURM_LOCALID (0).
constexpr std::array<const char*, 5> kVariables{"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
                                                 "MV2_COMM_WORLD_LOCAL_RANK", "PMIX_LOCAL_RANK", "SLURM_LOCALID"};

}  // namespace

std::optional<LocalRank> local_rank_from_environment(const EnvironmentLookup& getenv) {
  for (const char* name : kVariables) {
    const char* value = getenv ? getenv(name) : std::getenv(name);
    if (value == nullptr) continue;
    const std::string_view text(value);
    int rank = -1;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), rank);
    if (text.empty() || error != std::errc() || end != text.data() + text.size() || rank < 0) {
      throw Error(fmt::format("the launcher's local rank {}=\"{}\" is not a non-negative integer; unset it or "
                              "start the processes with mpirun or srun", name, text));
    }
    return LocalRank{rank, name};
  }
  return std::nullopt;
}

int device_for_local_rank(const std::optional<LocalRank>& local_rank, int device_count) {
  if (device_count < 1) {
    throw Error(fmt::format("no device to choose from ({} visible)", device_count));
  }
  return local_rank ? local_rank->rank % device_count : 0;
}

}  // namespace lowcomm
