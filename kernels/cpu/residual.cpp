// Residual add (include/lowcomm/kernels/residual.hpp). One add per element, so Cpu (threaded,
// vectorised) and Reference give the same bits.
#include "lowcomm/kernels/residual.hpp"

#include <cstdint>

#include "transformer_checks.hpp"
#if LOWCOMM_HAVE_CUDA
#include "../cuda/cuda_model_kernels.hpp"
#endif

namespace lowcomm::kernels {

void residual_add(Backend backend, std::span<float> out, std::span<const float> a,
                  std::span<const float> b) {
  const auto n = static_cast<std::int64_t>(out.size());
  detail::check_size("residual_add", "a", a.size(), n);
  detail::check_size("residual_add", "b", b.size(), n);
  float* o = out.data();
  const float* x = a.data();
  const float* y = b.data();
  switch (backend) {
    case Backend::Reference:
      for (std::int64_t i = 0; i < n; ++i) o[i] = x[i] + y[i];
      return;
    case Backend::Cpu:
#pragma omp parallel for simd schedule(static)
      for (std::int64_t i = 0; i < n; ++i) o[i] = x[i] + y[i];
      return;
    case Backend::Kokkos: break;
    case Backend::Cuda:
#if LOWCOMM_HAVE_CUDA
      return cuda_backend::residual_add(out, a, b);
#endif
      break;
  }
  unsupported("residual_add", backend);
}

}  // namespace lowcomm::kernels
