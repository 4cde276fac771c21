#include "lowcomm/comm/transport.hpp"

#include <fmt/format.h>


#include "collective_transport.hpp"
#include "lowcomm/error.hpp"

namespace lowcomm {

#if LOWCOMM_HAVE_NCCL
// nccl_transport.cpp
std::unique_ptr<CollectiveTransport> make_nccl_transport(MPI_Comm comm);
std::string nccl_library_version();
#endif

std::string_view to_string(Transport transport) {
  switch (transport) {
    case Transport::Mpi: return "mpi";
    case Transport::Nccl: return "nccl";
  }
  return "?";
}

Transport parse_transport(std::string_view name) {
  for (const Transport t : {Transport::Mpi, Transport::Nccl}) {
    if (to_string(t) == name) return t;
  }
  throw ConfigError(fmt::format("unknown transport '{}': use mpi or nccl", name));
}

std::string unavailable_reason(Transport transport) {
  if (transport == Transport::Mpi) return "";
#if LOWCOMM_HAVE_NCCL
  return "";
#else
  return "this build has no NCCL: build with CUDA (preset cuda) where NCCL's nccl.h and libnccl are found "
         "(the CUDA toolkit's, or NCCL_ROOT), or use comm.transport = \"mpi\"";
#endif
}

std::string nccl_version() {
#if LOWCOMM_HAVE_NCCL
  return nccl_library_version();
#else
  return "";
#endif
}

std::unique_ptr<CollectiveTransport> make_transport(Transport transport, MPI_Comm comm) {
  if (const std::string reason = unavailable_reason(transport); !reason.empty()) {
    throw ConfigError(fmt::format("comm.transport = \"{}\": {}", to_string(transport), reason));
  }
#if LOWCOMM_HAVE_NCCL
  if (transport == Transport::Nccl) return make_nccl_transport(comm);
#endif
  return make_mpi_transport(comm);
}

// ---- blocking calls as a start and its wait --------------------------------------------------

void CollectiveTransport::all_reduce_sum(void* data, std::size_t count, SumType type) {
  start_all_reduce_sum(data, count, type)->wait();
}

void CollectiveTransport::all_gather_v(const void* mine, std::span<const std::size_t> counts,
                                       std::size_t element_bytes, void* all) {
  start_all_gather_v(mine, counts, element_bytes, all)->wait();
}

void CollectiveTransport::broadcast(void* data, std::size_t count, std::size_t element_bytes, int root) {
  start_broadcast(data, count, element_bytes, root)->wait();
}

}  // namespace lowcomm
