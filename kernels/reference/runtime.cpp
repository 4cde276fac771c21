// The Reference backend's runtime: host memory, always available.
#include <cstring>

#include "../backend_kernels.hpp"
#include "../host_memory.hpp"

namespace lowcomm::kernels::reference_backend {

std::string unavailable_reason() { return ""; }
void place_on_node(const std::optional<LocalRank>& /*local_rank*/) {}  // one place: this host
std::string description() { return "plain loops on one core"; }

void* allocate(std::size_t bytes) {
  void* memory = detail::allocate_host(bytes);
  std::memset(memory, 0, bytes);
  return memory;
}

void release(void* memory) noexcept { detail::release_host(memory); }
double copy_bandwidth(std::size_t bytes) { return detail::host_copy_bandwidth(bytes); }

}  // namespace lowcomm::kernels::reference_backend
