#pragma once
// How many OpenMP threads each rank runs. Several ranks on one node (4 ranks on a 2-core laptop,
// or a Slurm job with several tasks per node) must share its cores: OpenMP's default of one thread
// per core in every rank oversubscribes the node, and spinning threads then slow a step down by
// orders of magnitude. Collective over comm.
#include <mpi.h>

namespace lowcomm {

// Unless OMP_NUM_THREADS is set (the user's choice wins), sets every rank's OpenMP thread count to
// max(1, min(cores it is bound to, cores of its node / ranks on its node)) and returns it;
// otherwise returns the count OMP_NUM_THREADS gave.
int share_cores_among_local_ranks(MPI_Comm comm);

}  // namespace lowcomm
