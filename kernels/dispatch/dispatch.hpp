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

#include <cstdint>
#include <span>

namespace lowcomm::kernels::detail {
[[noreturn]] void unknown_backend(Backend backend);

// Whether two spans share no memory (an empty one shares none): the dispatch files' check of a
// kernel whose outputs are written while its inputs are read.
inline bool apart(std::span<const float> a, std::span<const float> b) {
  const auto x = reinterpret_cast<std::uintptr_t>(a.data());
  const auto y = reinterpret_cast<std::uintptr_t>(b.data());
  return a.empty() || b.empty() || x + a.size_bytes() <= y || y + b.size_bytes() <= x;
}
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
