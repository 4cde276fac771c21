#include "lowcomm/kernels/elementwise.hpp"

#include <cstdint>
#include <string_view>

#include <fmt/format.h>

#include "lowcomm/error.hpp"
#if LOWCOMM_HAVE_CUDA
#include "../cuda/cuda_backend.hpp"
#endif

namespace lowcomm::kernels {

namespace {

constexpr std::string_view kSign = "sign";

// Elements below which the Cpu backend stays on one thread: the loop streams memory at several
// elements per nanosecond.
constexpr std::int64_t kParallelElements = std::int64_t{1} << 18;

void check_arguments(std::span<const float> in, std::span<float> out) {
  if (in.size() != out.size()) {
    throw Error(fmt::format("{}: input has {} elements but output {}", kSign, in.size(),
                            out.size()));
  }
  if (in.empty() || in.data() == out.data()) return;
  const auto a = reinterpret_cast<std::uintptr_t>(in.data());
  const auto b = reinterpret_cast<std::uintptr_t>(out.data());
  if (a < b + out.size_bytes() && b < a + in.size_bytes()) {
    throw Error(fmt::format("{}: input and output overlap without being the same span", kSign));
  }
}

}  // namespace

void sign(Backend backend, std::span<const float> in, std::span<float> out) {
  check_arguments(in, out);
  const auto n = static_cast<std::int64_t>(in.size());
  switch (backend) {
    case Backend::Reference:
      for (std::int64_t i = 0; i < n; ++i) {
        if (in[i] > 0.0f) {
          out[i] = 1.0f;
        } else if (in[i] < 0.0f) {
          out[i] = -1.0f;
        } else {
          out[i] = 0.0f;  // +0, -0 and NaN
        }
      }
      return;
    case Backend::Cpu: {
      const float* x = in.data();
      float* y = out.data();
      // Both comparisons are false for zeros and NaN, so those become 0 - 0 = +0.
#pragma omp parallel for simd schedule(static) if (n > kParallelElements)
      for (std::int64_t i = 0; i < n; ++i) {
        y[i] = static_cast<float>(x[i] > 0.0f) - static_cast<float>(x[i] < 0.0f);
      }
      return;
    }
    case Backend::Kokkos: break;
    case Backend::Cuda:
#if LOWCOMM_HAVE_CUDA
      return cuda_backend::sign(in, out);
#endif
      break;
  }
  unsupported(kSign, backend);
}

}  // namespace lowcomm::kernels
