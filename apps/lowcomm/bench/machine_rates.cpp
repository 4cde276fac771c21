#include "machine_rates.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <vector>

#include "lowcomm/core/timing.hpp"
#include "lowcomm/kernels/linalg.hpp"

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

}  // namespace

double measure_copy_bandwidth() {
  const std::size_t bytes = std::size_t{256} << 20;
  std::vector<char> from(bytes, 1), to(bytes, 0);
  const double seconds = best_of_five([&](int i) {
    std::memcpy(to.data(), from.data(), bytes);
    from[static_cast<std::size_t>(i)] = to[bytes - 1 - static_cast<std::size_t>(i)];  // keep both live
  });
  return 2.0 * static_cast<double>(bytes) / seconds / 1e9;
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
