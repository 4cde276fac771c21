// The Cpu backend's runtime: host memory, the BLAS behind its products, and the host memory
// functions the other host backends share (../host_memory.hpp).
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>
#include <new>
#include <vector>

#include <fmt/format.h>

#include "../backend_kernels.hpp"
#include "../host_memory.hpp"
#include "blas.hpp"
#include "lowcomm/error.hpp"

namespace lowcomm::kernels {

namespace {
constexpr std::align_val_t kAlignment{256};
}  // namespace

void* detail::allocate_host(std::size_t bytes) {
  void* memory = ::operator new(bytes, kAlignment, std::nothrow);
  if (memory == nullptr) {
    throw Error(fmt::format("out of host memory: {} bytes ({:.2f} GiB) for a buffer", bytes,
                            static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0)));
  }
  return memory;
}

void detail::release_host(void* memory) noexcept { ::operator delete(memory, kAlignment); }

double detail::host_copy_bandwidth(std::size_t bytes) {
  std::vector<char> from(bytes, 1), to(bytes, 0);
  double best = std::numeric_limits<double>::infinity();
  for (int i = 0; i < 6; ++i) {  // the first warms up; the best of the other five
    const auto start = std::chrono::steady_clock::now();
    std::memcpy(to.data(), from.data(), bytes);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    from[static_cast<std::size_t>(i) % bytes] = to[bytes - 1 - static_cast<std::size_t>(i) % bytes];  // keep both live
    if (i > 0) best = std::min(best, seconds);
  }
  return 2.0 * static_cast<double>(bytes) / best / 1e9;
}

namespace cpu_backend {

std::string unavailable_reason() { return ""; }
void place_on_node(const std::optional<LocalRank>& /*local_rank*/) {}  // one place: this host
std::string description() { return std::string(detail::sgemm_provider()); }

void* allocate(std::size_t bytes) {
  auto* memory = static_cast<unsigned char*>(detail::allocate_host(bytes));
  // Zeroed as the Cpu kernels will write it: a static split over the threads, each first-touching
  // the pages it later writes in the kernels' own static partitions.
  const auto n = static_cast<std::int64_t>(bytes);
#pragma omp parallel if (n > (std::int64_t{1} << 18))
  {
    const std::int64_t threads = omp_get_num_threads(), thread = omp_get_thread_num();
    const std::int64_t begin = n / threads * thread + std::min(thread, n % threads);
    const std::int64_t end = begin + n / threads + (thread < n % threads ? 1 : 0);
    std::memset(memory + begin, 0, static_cast<std::size_t>(end - begin));
  }
  return memory;
}

void release(void* memory) noexcept { detail::release_host(memory); }
double copy_bandwidth(std::size_t bytes) { return detail::host_copy_bandwidth(bytes); }

}  // namespace cpu_backend

}  // namespace lowcomm::kernels
