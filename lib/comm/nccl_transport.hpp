#pragma once
// comm.transport = nccl: nccl_transport.cpp in CUDA builds that found NCCL, not_built/
// nccl_transport.cpp (which says why not) in every other build.
#include <mpi.h>

#include <memory>
#include <string>

#include "collective_transport.hpp"

namespace lowcomm {

// "" where this build has NCCL; otherwise what to do to get it.
std::string nccl_unavailable_reason();
// Collective over `comm`: one GPU per rank. Throws lowcomm::Error where NCCL cannot start.
std::unique_ptr<CollectiveTransport> make_nccl_transport(MPI_Comm comm);
// "NCCL 2.21.5", or "" without NCCL.
std::string nccl_library_version();

}  // namespace lowcomm
