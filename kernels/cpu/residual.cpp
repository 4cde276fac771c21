// residual.hpp on the Cpu backend: threaded and vectorised. One add per element, so Cpu and
// Reference give the same bits.
#include <cstdint>

#include "../backend_kernels.hpp"

namespace lowcomm::kernels::cpu_backend {

void residual_add(std::span<float> out, std::span<const float> a, std::span<const float> b) {
  const auto n = static_cast<std::int64_t>(out.size());
  float* o = out.data();
  const float* x = a.data();
  const float* y = b.data();
#pragma omp parallel for simd schedule(static)
  for (std::int64_t i = 0; i < n; ++i) o[i] = x[i] + y[i];
}

}  // namespace lowcomm::kernels::cpu_backend
