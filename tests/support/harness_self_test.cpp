// Checks the MPI test harness itself: when one rank (the last) fails an assertion and the others
// pass, the whole run must fail. CTest runs it through tests/cli/expect.sh, which passes only if
// mpiexec exits non-zero and the failing rank's message is printed.
#include <gtest/gtest.h>
#include <mpi.h>

TEST(Harness, OneFailingRankFailsTheTest) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank == size - 1) ADD_FAILURE() << "deliberate failure on the last rank only";
}
