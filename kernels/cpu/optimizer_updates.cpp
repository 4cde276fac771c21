#include "lowcomm/kernels/optimizer_updates.hpp"

#include <fmt/format.h>

#include <cstddef>
#include <string_view>

#include "../optimizer_update_rules.hpp"
#include "element_pieces.hpp"
#include "lowcomm/core/simd_clones.hpp"
#include "lowcomm/error.hpp"
#if LOWCOMM_HAVE_KOKKOS
#include "../kokkos/kokkos_backend.hpp"
#endif
#if LOWCOMM_HAVE_CUDA
#include "../cuda/cuda_backend.hpp"
#endif

namespace lowcomm::kernels {

namespace {

void check_size(std::string_view kernel, std::string_view what, std::size_t size, std::size_t expected) {
  if (size != expected) {
    throw Error(fmt::format("{}: {} holds {} values, expected {}{}", kernel, what, size, expected,
                            expected == 0 ? " (no momentum)" : " (the parameter tensor's size)"));
  }
}

// The Cpu loops: the rules over [begin, end) of __restrict pointers, vectorised (SIMD clones; no
// multiply-add is fused, so every clone gives the Reference's bits) and threaded in pieces.
LOWCOMM_SIMD_CLONES
void adamw_piece(const AdamWScalars& s, std::size_t begin, std::size_t end, float* __restrict p,
                 const float* __restrict g, float* __restrict m, float* __restrict v) {
  for (std::size_t j = begin; j < end; ++j) adamw_element(s, p[j], g[j], m[j], v[j]);
}

LOWCOMM_SIMD_CLONES
void sgd_piece(const SgdScalars& s, std::size_t begin, std::size_t end, float* __restrict p,
               const float* __restrict g, float* __restrict buffer) {
  if (s.momentum) {
    for (std::size_t j = begin; j < end; ++j) sgd_element(s, p[j], g[j], buffer + j);
  } else {
    for (std::size_t j = begin; j < end; ++j) sgd_element(s, p[j], g[j], nullptr);
  }
}

LOWCOMM_SIMD_CLONES
void signum_piece(const SignumScalars& s, std::size_t begin, std::size_t end, float* __restrict p,
                  const float* __restrict g, float* __restrict m) {
  for (std::size_t j = begin; j < end; ++j) signum_element(s, p[j], g[j], m[j]);
}

}  // namespace

void adamw_update(Backend backend, const AdamWScalars& s, std::span<float> param, std::span<const float> grad,
                  std::span<float> exp_avg, std::span<float> exp_avg_sq) {
  constexpr std::string_view kernel = "adamw_update";
  check_size(kernel, "the gradient", grad.size(), param.size());
  check_size(kernel, "exp_avg", exp_avg.size(), param.size());
  check_size(kernel, "exp_avg_sq", exp_avg_sq.size(), param.size());
  switch (backend) {
    case Backend::Reference:
      for (std::size_t j = 0; j < param.size(); ++j) {
        adamw_element(s, param[j], grad[j], exp_avg[j], exp_avg_sq[j]);
      }
      return;
    case Backend::Cpu:
      cpu_detail::for_each_piece(param.size(), [&](std::size_t begin, std::size_t end) {
        adamw_piece(s, begin, end, param.data(), grad.data(), exp_avg.data(), exp_avg_sq.data());
      });
      return;
    case Backend::Kokkos:
#if LOWCOMM_HAVE_KOKKOS
      if (kokkos_backend::reads_host_memory()) {
        return kokkos_backend::adamw_update(s, param, grad, exp_avg, exp_avg_sq);
      }
      // In a device space: the Cpu loops on the host-memory state (kokkos_backend.hpp).
      return adamw_update(Backend::Cpu, s, param, grad, exp_avg, exp_avg_sq);
#endif
      break;
    case Backend::Cuda:
#if LOWCOMM_HAVE_CUDA
      return cuda_backend::adamw_update(s, param, grad, exp_avg, exp_avg_sq);
#endif
      break;
  }
  unsupported(kernel, backend);
}

void sgd_update(Backend backend, const SgdScalars& s, std::span<float> param, std::span<const float> grad,
                std::span<float> buffer) {
  constexpr std::string_view kernel = "sgd_update";
  check_size(kernel, "the gradient", grad.size(), param.size());
  check_size(kernel, "the momentum buffer", buffer.size(), s.momentum ? param.size() : 0);
  switch (backend) {
    case Backend::Reference:
      for (std::size_t j = 0; j < param.size(); ++j) {
        sgd_element(s, param[j], grad[j], s.momentum ? &buffer[j] : nullptr);
      }
      return;
    case Backend::Cpu:
      cpu_detail::for_each_piece(param.size(), [&](std::size_t begin, std::size_t end) {
        sgd_piece(s, begin, end, param.data(), grad.data(), buffer.data());
      });
      return;
    case Backend::Kokkos:
#if LOWCOMM_HAVE_KOKKOS
      if (kokkos_backend::reads_host_memory()) return kokkos_backend::sgd_update(s, param, grad, buffer);
      return sgd_update(Backend::Cpu, s, param, grad, buffer);  // as adamw_update
#endif
      break;
    case Backend::Cuda:
#if LOWCOMM_HAVE_CUDA
      return cuda_backend::sgd_update(s, param, grad, buffer);
#endif
      break;
  }
  unsupported(kernel, backend);
}

void signum_update(Backend backend, const SignumScalars& s, std::span<float> param, std::span<const float> grad,
                   std::span<float> momentum) {
  constexpr std::string_view kernel = "signum_update";
  check_size(kernel, "the gradient", grad.size(), param.size());
  check_size(kernel, "the momentum", momentum.size(), param.size());
  switch (backend) {
    case Backend::Reference:
      for (std::size_t j = 0; j < param.size(); ++j) signum_element(s, param[j], grad[j], momentum[j]);
      return;
    case Backend::Cpu:
      cpu_detail::for_each_piece(param.size(), [&](std::size_t begin, std::size_t end) {
        signum_piece(s, begin, end, param.data(), grad.data(), momentum.data());
      });
      return;
    case Backend::Kokkos:
#if LOWCOMM_HAVE_KOKKOS
      if (kokkos_backend::reads_host_memory()) return kokkos_backend::signum_update(s, param, grad, momentum);
      return signum_update(Backend::Cpu, s, param, grad, momentum);  // as adamw_update
#endif
      break;
    case Backend::Cuda:
#if LOWCOMM_HAVE_CUDA
      return cuda_backend::signum_update(s, param, grad, momentum);
#endif
      break;
  }
  unsupported(kernel, backend);
}

}  // namespace lowcomm::kernels
