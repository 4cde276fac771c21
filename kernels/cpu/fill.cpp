#include <cstdint>

#include "lowcomm/kernels/elementwise.hpp"
#if LOWCOMM_HAVE_CUDA
#include "../cuda/cuda_backend.hpp"
#endif

namespace lowcomm::kernels {

void fill(Backend backend, std::span<float> out, float value) {
  float* o = out.data();
  const auto n = static_cast<std::int64_t>(out.size());
  switch (backend) {
    case Backend::Reference:
      for (std::int64_t i = 0; i < n; ++i) o[i] = value;
      return;
    case Backend::Cpu:
      // A static split, so that first-touch pages stay with the thread that later writes them in
      // the other kernels' static partitions (a model's half-gigabyte of gradients).
#pragma omp parallel for simd schedule(static)
      for (std::int64_t i = 0; i < n; ++i) o[i] = value;
      return;
    case Backend::Kokkos: break;
    case Backend::Cuda:
#if LOWCOMM_HAVE_CUDA
      return cuda_backend::fill(out, value);
#endif
      break;
  }
  unsupported("fill", backend);
}

}  // namespace lowcomm::kernels
