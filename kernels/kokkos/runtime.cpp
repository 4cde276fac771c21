// Kokkos is initialised on the first Backend::Kokkos call rather than by every program that
// links lowcomm: a run on the Cpu backend never starts it.
#include <Kokkos_Core.hpp>

#include <cstdlib>
#include <mutex>

#include <fmt/format.h>

#include "../host_memory.hpp"
#include "kokkos_backend.hpp"

namespace lowcomm::kernels::kokkos_backend {

void ensure_initialized() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (Kokkos::is_initialized()) return;  // the program started it (a site's own setup)
    int argc = 0;
    char* argv[] = {nullptr};
    Kokkos::initialize(argc, argv);
    std::atexit([] { Kokkos::finalize(); });
  });
}

std::string unavailable_reason() { return ""; }
void place_on_node(const std::optional<LocalRank>& /*local_rank*/) {}  // Kokkos::initialize picks its device

// The kernels take host spans (copied to a device space and back per call, kokkos_views.hpp), so
// Kokkos's buffers are the Cpu backend's host memory.
void* allocate(std::size_t bytes) { return cpu_backend::allocate(bytes); }
void release(void* memory) noexcept { cpu_backend::release(memory); }
double copy_bandwidth(std::size_t bytes) { return detail::host_copy_bandwidth(bytes); }

bool reads_host_memory() {
  return Kokkos::SpaceAccessibility<Kokkos::DefaultExecutionSpace, Kokkos::HostSpace>::accessible;
}

std::string description() {
  ensure_initialized();
  // KOKKOS_VERSION is major·10000 + minor·100 + patch in 3.x and 4.x alike.
  return fmt::format("Kokkos {}.{}.{}, execution space {}, matrix products {}", KOKKOS_VERSION / 10000,
                     KOKKOS_VERSION / 100 % 100, KOKKOS_VERSION % 100, Kokkos::DefaultExecutionSpace::name(),
                     gemm_provider());
}

}  // namespace lowcomm::kernels::kokkos_backend
