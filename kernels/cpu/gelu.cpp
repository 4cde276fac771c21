// GELU, tanh approximation (include/lowcomm/kernels/gelu.hpp).
#include "lowcomm/kernels/gelu.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "../stored_values.hpp"
#include "transformer_checks.hpp"
#if LOWCOMM_HAVE_CUDA
#include "../cuda/cuda_model_kernels.hpp"
#endif

namespace lowcomm::kernels {
namespace {

constexpr float kSqrt2OverPi = 0.7978845608028654f;
constexpr float kCubic = 0.044715f;

// Cpu writes the tanh in terms of a logistic function: 0.5·(1 + tanh u) = s = 1 / (1 + exp(−2u))
// and 1 − tanh² u = 4·s·(1 − s) with 1 − s = exp(−2u)·s. That avoids the cancellation of
// 1 + tanh u for large negative u (where GELU and its slope are tiny but not zero), and expf is
// the only transcendental. u is clamped to ±40, where s is 0 or 1 in float, so exp never overflows.
inline float cubic_argument(float x) { return kSqrt2OverPi * (x + kCubic * x * x * x); }

inline float gelu_reference(float x) {
  return 0.5f * x * (1.0f + std::tanh(cubic_argument(x)));
}

// d/dx: 0.5·(1 + tanh u) + 0.5·x·(1 − tanh² u)·sqrt(2/π)·(1 + 3·0.044715·x²).
inline float gelu_grad_reference(float x) {
  const float t = std::tanh(cubic_argument(x));
  return 0.5f * (1.0f + t) +
         0.5f * x * (1.0f - t * t) * kSqrt2OverPi * (1.0f + 3.0f * kCubic * x * x);
}

inline float gelu_cpu(float x) {
  const float u = std::clamp(cubic_argument(x), -40.0f, 40.0f);
  return x / (1.0f + std::exp(-2.0f * u));
}

inline float gelu_grad_cpu(float x) {
  const float u = std::clamp(cubic_argument(x), -40.0f, 40.0f);
  const float e = std::exp(-2.0f * u);
  const float s = 1.0f / (1.0f + e);
  return s + 2.0f * x * (s * (e * s)) * kSqrt2OverPi * (1.0f + 3.0f * kCubic * x * x);
}

// One template for both storages of inp (../stored_values.hpp).
template <class Stored>
void gelu_forward_of(Backend backend, std::span<float> out, std::span<const Stored> inp) {
  const auto n = static_cast<std::int64_t>(out.size());
  detail::check_size("gelu_forward", "inp", inp.size(), n);
  float* o = out.data();
  const Stored* x = inp.data();
  switch (backend) {
    case Backend::Reference:
      for (std::int64_t i = 0; i < n; ++i) o[i] = gelu_reference(detail::widened(x[i]));
      return;
    case Backend::Cpu:
#pragma omp parallel for simd schedule(static)
      for (std::int64_t i = 0; i < n; ++i) o[i] = gelu_cpu(detail::widened(x[i]));
      return;
    case Backend::Kokkos: break;
    case Backend::Cuda:
#if LOWCOMM_HAVE_CUDA
      return cuda_backend::gelu_forward(out, inp);
#endif
      break;
  }
  unsupported("gelu_forward", backend);
}

template <class Stored>
void gelu_backward_of(Backend backend, std::span<float> dinp, std::span<const Stored> inp,
                      std::span<const float> dout) {
  const auto n = static_cast<std::int64_t>(dinp.size());
  detail::check_size("gelu_backward", "inp", inp.size(), n);
  detail::check_size("gelu_backward", "dout", dout.size(), n);
  float* g = dinp.data();
  const Stored* x = inp.data();
  const float* d = dout.data();
  switch (backend) {
    case Backend::Reference:
      for (std::int64_t i = 0; i < n; ++i) g[i] = gelu_grad_reference(detail::widened(x[i])) * d[i];
      return;
    case Backend::Cpu:
#pragma omp parallel for simd schedule(static)
      for (std::int64_t i = 0; i < n; ++i) g[i] = gelu_grad_cpu(detail::widened(x[i])) * d[i];
      return;
    case Backend::Kokkos: break;
    case Backend::Cuda:
#if LOWCOMM_HAVE_CUDA
      return cuda_backend::gelu_backward(dinp, inp, dout);
#endif
      break;
  }
  unsupported("gelu_backward", backend);
}

}  // namespace

void gelu_forward(Backend backend, std::span<float> out, std::span<const float> inp) {
  gelu_forward_of(backend, out, inp);
}

void gelu_forward(Backend backend, std::span<float> out, std::span<const std::uint16_t> inp_bf16) {
  gelu_forward_of(backend, out, inp_bf16);
}

void gelu_backward(Backend backend, std::span<float> dinp, std::span<const float> inp,
                   std::span<const float> dout) {
  gelu_backward_of(backend, dinp, inp, dout);
}

void gelu_backward(Backend backend, std::span<float> dinp, std::span<const std::uint16_t> inp_bf16,
                   std::span<const float> dout) {
  gelu_backward_of(backend, dinp, inp_bf16, dout);
}

}  // namespace lowcomm::kernels
