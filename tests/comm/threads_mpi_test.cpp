// Ranks on one node share its cores: each runs at most its share of OpenMP threads, unless the
// user set OMP_NUM_THREADS.
#include <gtest/gtest.h>
#include <omp.h>

#include <cstdlib>
#include <thread>

#include "lowcomm/comm/threads.hpp"

namespace lowcomm {
namespace {

TEST(Threads, RanksOnOneNodeShareItsCores) {
  int ranks = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);  // mpiexec runs the test's ranks on this node
  unsetenv("OMP_NUM_THREADS");
  const int threads = share_cores_among_local_ranks(MPI_COMM_WORLD);
  EXPECT_GE(threads, 1);
  EXPECT_LE(threads, std::max(1, static_cast<int>(std::thread::hardware_concurrency()) / ranks));
  EXPECT_EQ(omp_get_max_threads(), threads);
}

TEST(Threads, TheUsersChoiceWins) {
  setenv("OMP_NUM_THREADS", "3", 1);
  omp_set_num_threads(3);
  EXPECT_EQ(share_cores_among_local_ranks(MPI_COMM_WORLD), 3);
  EXPECT_EQ(omp_get_max_threads(), 3);
}

}  // namespace
}  // namespace lowcomm
