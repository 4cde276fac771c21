// comm.transport = nccl in a build without NCCL (a CUDA build that found nccl.h and libnccl has
// ../nccl_transport.cpp instead).
#include "../nccl_transport.hpp"

#include "lowcomm/error.hpp"

namespace lowcomm {

std::string nccl_unavailable_reason() {
  return "this build has no NCCL: build with CUDA (preset cuda) where NCCL's nccl.h and libnccl are found "
         "(the CUDA toolkit's, or NCCL_ROOT), or use comm.transport = \"mpi\"";
}

std::unique_ptr<CollectiveTransport> make_nccl_transport(MPI_Comm /*comm*/) {
  throw ConfigError("comm.transport = \"nccl\": " + nccl_unavailable_reason());
}

std::string nccl_library_version() { return ""; }

}  // namespace lowcomm
