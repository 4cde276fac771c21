#include "machine_rates.hpp"

#include <algorithm>
#include <limits>
#include <vector>

#include "lowcomm/core/timing.hpp"
#include "lowcomm/kernels/linalg.hpp"
#include "lowcomm/kernels/memory.hpp"

namespace lowcomm::cli {

namespace {

template <class Work>
double best_of_five(Work&& work) {
  double best = std::numeric_limits<double>::infinity();
  for (int i = 0; i < 5; ++i) {
    const auto start = SteadyClock::now();
    work(i);
    best = std::min(best, seconds_since(start));
  }
  return best;
}

bool on_device(const ExecutionContext& execution) { return execution.backend == kernels::Backend::Cuda; }

}  // namespace

double measure_copy_bandwidth(const ExecutionContext& execution) {
  return kernels::measure_copy_bandwidth(execution.backend, on_device(execution) ? std::size_t{1} << 30
                                                                                   : std::size_t{256} << 20);
}

std::string copy_bandwidth_method(const ExecutionContext& execution) {
  return on_device(execution) ? "cudaMemcpy of 1 GiB device to device, read + write"
                              : "memcpy of 256 MiB by one core, read + write";
}

double measure_sgemm_gflops(const ExecutionContext& execution) {
  constexpr std::int64_t n = 768;
  std::vector<float> a(n * n, 0.5f), b(n * n, 0.25f), c(n * n, 0.0f);
  const double seconds = best_of_five([&](int) {
    kernels::gemm(execution.backend, false, false, n, n, n, 1.0f, a, b, 0.0f, c);
  });
  return 2.0 * static_cast<double>(n * n * n) / seconds / 1e9;
}

}  // namespace lowcomm::cli
