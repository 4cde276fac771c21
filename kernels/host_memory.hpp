#pragma once
// Host memory for the backends that compute on it (Reference, Cpu, Kokkos), at a 256-byte
// boundary as cudaMallocManaged's: whole cache lines and vector widths for every kernel.
#include <cstddef>

namespace lowcomm::kernels::detail {

// `bytes` of host memory, not yet zeroed; throws lowcomm::Error saying how much was asked.
void* allocate_host(std::size_t bytes);
void release_host(void* memory) noexcept;

// GB/s (read + write) of one memcpy of `bytes` by one core, best of five after a warm-up.
double host_copy_bandwidth(std::size_t bytes);

}  // namespace lowcomm::kernels::detail
