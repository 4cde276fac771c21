#include "lowcomm/comm/threads.hpp"

#include <omp.h>
#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <thread>

namespace lowcomm {

namespace {

int node_cores() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

// The cores this process may run on (its affinity mask: MPI or Slurm binding).
int usable_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return node_cores();
}

}  // namespace

int share_cores_among_local_ranks(MPI_Comm comm) {
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int local_ranks = 1;
  MPI_Comm_size(node, &local_ranks);
  MPI_Comm_free(&node);
  const char* user = std::getenv("OMP_NUM_THREADS");
  if (user && *user) return omp_get_max_threads();
  // The node's share of each rank, and never more than its binding allows: ranks bound to their own
  // cores see only those; unbound ranks (or ranks bound to a shared socket) see more than their share.
  const int threads = std::max(1, std::min(usable_cores(), node_cores() / local_ranks));
  omp_set_num_threads(threads);
  return threads;
}

}  // namespace lowcomm
