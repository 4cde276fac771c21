#pragma once
// The one place a Backend becomes a backend's namespace. A dispatch file (one per family) checks
// a kernel's arguments, then
//
//   LOWCOMM_DISPATCH(backend, topk_global, values, kept, indices, selected);
//
// calls reference_backend::topk_global(values, kept, indices, selected), or cpu_backend's,
// kokkos_backend's or cuda_backend's: every backend declares every kernel (../backend_kernels.hpp),
// those it lacks as stubs that say so, so no dispatch names a backend or asks the build.
#include "../backend_kernels.hpp"

namespace lowcomm::kernels::detail {
[[noreturn]] void unknown_backend(Backend backend);
}  // namespace lowcomm::kernels::detail

#define LOWCOMM_DISPATCH(backend, kernel, ...)                                                      \
  ([&]() -> decltype(auto) {                                                                       \
    switch (backend) {                                                                             \
      case ::lowcomm::kernels::Backend::Reference:                                                 \
        return ::lowcomm::kernels::reference_backend::kernel(__VA_ARGS__);                         \
      case ::lowcomm::kernels::Backend::Cpu: return ::lowcomm::kernels::cpu_backend::kernel(__VA_ARGS__); \
      case ::lowcomm::kernels::Backend::Kokkos:                                                    \
        return ::lowcomm::kernels::kokkos_backend::kernel(__VA_ARGS__);                            \
      case ::lowcomm::kernels::Backend::Cuda: return ::lowcomm::kernels::cuda_backend::kernel(__VA_ARGS__); \
    }                                                                                              \
    ::lowcomm::kernels::detail::unknown_backend(backend);                                          \
  }())
