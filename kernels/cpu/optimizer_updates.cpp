// optimizer_updates.hpp on the Cpu backend: the Reference's rule for each element
// (../optimizer_update_rules.hpp), vectorised and threaded in pieces (element_pieces.hpp). Kokkos
// in a space that cannot read host memory runs these loops too (kokkos/optimizer_updates.cpp).
#include <cstddef>

#include "../backend_kernels.hpp"
#include "../optimizer_update_rules.hpp"
#include "element_pieces.hpp"
#include "lowcomm/core/simd_clones.hpp"

namespace lowcomm::kernels::cpu_backend {

namespace {

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

void adamw_update(const AdamWScalars& s, std::span<float> param, std::span<const float> grad,
                  std::span<float> exp_avg, std::span<float> exp_avg_sq) {
  cpu_detail::for_each_piece(param.size(), [&](std::size_t begin, std::size_t end) {
    adamw_piece(s, begin, end, param.data(), grad.data(), exp_avg.data(), exp_avg_sq.data());
  });
}

void sgd_update(const SgdScalars& s, std::span<float> param, std::span<const float> grad, std::span<float> buffer) {
  cpu_detail::for_each_piece(param.size(), [&](std::size_t begin, std::size_t end) {
    sgd_piece(s, begin, end, param.data(), grad.data(), buffer.data());
  });
}

void signum_update(const SignumScalars& s, std::span<float> param, std::span<const float> grad,
                   std::span<float> momentum) {
  cpu_detail::for_each_piece(param.size(), [&](std::size_t begin, std::size_t end) {
    signum_piece(s, begin, end, param.data(), grad.data(), momentum.data());
  });
}

}  // namespace lowcomm::kernels::cpu_backend
