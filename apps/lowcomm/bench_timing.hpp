#pragma once
// What the benchmarks report as a collective's or a step's time: the slowest rank's, since the
// others wait for it.
#include <mpi.h>

namespace lowcomm::cli {

inline double slowest_rank(double seconds, MPI_Comm comm = MPI_COMM_WORLD) {
  double worst = 0;
  MPI_Allreduce(&seconds, &worst, 1, MPI_DOUBLE, MPI_MAX, comm);
  return worst;
}

}  // namespace lowcomm::cli
