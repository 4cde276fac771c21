#include "lowcomm/comm/transport.hpp"

#include <fmt/format.h>

#include "collective_transport.hpp"
#include "lowcomm/error.hpp"
#include "nccl_transport.hpp"

namespace lowcomm {

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
  return transport == Transport::Mpi ? "" : nccl_unavailable_reason();
}

std::string nccl_version() { return nccl_library_version(); }

std::unique_ptr<CollectiveTransport> make_transport(Transport transport, MPI_Comm comm) {
  if (const std::string reason = unavailable_reason(transport); !reason.empty()) {
    throw ConfigError(fmt::format("comm.transport = \"{}\": {}", to_string(transport), reason));
  }
  return transport == Transport::Nccl ? make_nccl_transport(comm) : make_mpi_transport(comm);
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
