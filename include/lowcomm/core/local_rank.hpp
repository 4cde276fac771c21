#pragma once
// Which GPU a process takes: the rank among the processes of its node, as the launcher announces
// it, modulo the devices it can see. One rank per GPU is the layout Slurm and mpirun give with
// one task per GPU; with `--gpus-per-task=1` (each task sees one device) every rank takes
// device 0 of its own.
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace lowcomm {

// A lookup of environment variables, std::getenv by default (tests pass their own).
using EnvironmentLookup = std::function<const char*(const char*)>;

struct LocalRank {
  int rank = 0;
  std::string source;  // the variable it came from, e.g. "OMPI_COMM_WORLD_LOCAL_RANK"
};

// The first of these that is set: OMPI_COMM_WORLD_LOCAL_RANK (Open MPI's mpirun),
// MPI_LOCALRANKID (MPICH and Intel MPI's Hydra), MV2_COMM_WORLD_LOCAL_RANK (MVAPICH2),
// PMIX_LOCAL_RANK (PMIx launchers), SLURM_LOCALID (srun); nullopt when none is (a process
// started by hand). Throws lowcomm::Error when the variable holds anything but a non-negative
// integer, naming it.
std::optional<LocalRank> local_rank_from_environment(const EnvironmentLookup& getenv = {});

// The device a process with this local rank takes among `device_count` visible ones:
// local rank modulo count (0 without a local rank). Throws lowcomm::Error when device_count < 1.
int device_for_local_rank(const std::optional<LocalRank>& local_rank, int device_count);

}  // namespace lowcomm
