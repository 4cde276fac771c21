#pragma once
#include <mpi.h>

#include <string>
#include <vector>

namespace lowcomm {

// Every rank's processor name, in rank order, on every rank (for run logs: which node ran what).
std::vector<std::string> gather_host_names(MPI_Comm comm);

}  // namespace lowcomm
