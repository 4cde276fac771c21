#include "lowcomm/kernels/backend.hpp"

#include <fmt/format.h>

#include "blas.hpp"
#include "lowcomm/error.hpp"
#if LOWCOMM_HAVE_KOKKOS
#include "../kokkos/kokkos_backend.hpp"
#endif
#if LOWCOMM_HAVE_CUDA
#include "../cuda/cuda_backend.hpp"
#endif

namespace lowcomm::kernels {

std::string_view to_string(Backend backend) {
  switch (backend) {
    case Backend::Reference: return "reference";
    case Backend::Cpu: return "cpu";
    case Backend::Kokkos: return "kokkos";
    case Backend::Cuda: return "cuda";
  }
  return "?";
}

std::string_view cpu_matrix_products() { return detail::sgemm_provider(); }

bool has_model_kernels(Backend backend) {
#if LOWCOMM_HAVE_CUDA
  if (backend == Backend::Cuda) return true;
#endif
  return backend == Backend::Reference || backend == Backend::Cpu;
}

std::string kokkos_description() {
#if LOWCOMM_HAVE_KOKKOS
  return kokkos_backend::description();
#else
  return "";
#endif
}

std::string cuda_description() {
#if LOWCOMM_HAVE_CUDA
  return cuda_backend::description();
#else
  return "";
#endif
}

std::string unavailable_reason(Backend backend) {
  switch (backend) {
    case Backend::Reference:
    case Backend::Cpu: return "";
    case Backend::Kokkos:
#if LOWCOMM_HAVE_KOKKOS
      return "";
#else
      return "this build has no Kokkos kernels; configure with -DLOWCOMM_ENABLE_KOKKOS=ON (preset kokkos)";
#endif
    case Backend::Cuda:
#if LOWCOMM_HAVE_CUDA
      return cuda_backend::unavailable_reason();
#else
      return "this build has no CUDA kernels; configure with CUDA (preset cuda, nvcc 12 or newer)";
#endif
  }
  return "unknown backend";
}

void unsupported(std::string_view kernel, Backend backend) {
  throw Error(fmt::format("kernel {} has no {} implementation in this build", kernel, to_string(backend)));
}

}  // namespace lowcomm::kernels
