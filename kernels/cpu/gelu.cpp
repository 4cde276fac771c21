// gelu.hpp on the Cpu backend: the tanh written as a logistic function (below), threads and SIMD
// over the elements. One template for both storages of inp (../stored_values.hpp).
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "../backend_kernels.hpp"
#include "../gelu_rows.hpp"
#include "../stored_values.hpp"

namespace lowcomm::kernels::cpu_backend {

namespace {

using detail::gelu_cubic_argument;
using detail::kGeluCubic;
using detail::kGeluSqrt2OverPi;

// Cpu writes the tanh in terms of a logistic function: 0.5·(1 + tanh u) = s = 1 / (1 + exp(−2u))
// and 1 − tanh² u = 4·s·(1 − s) with 1 − s = exp(−2u)·s. That avoids the cancellation of
// 1 + tanh u for large negative u (where GELU and its slope are tiny but not zero), and expf is
// the only transcendental. u is clamped to ±40, where s is 0 or 1 in float, so exp never overflows.
inline float gelu_cpu(float x) {
  const float u = std::clamp(gelu_cubic_argument(x), -40.0f, 40.0f);
  return x / (1.0f + std::exp(-2.0f * u));
}

inline float gelu_grad_cpu(float x) {
  const float u = std::clamp(gelu_cubic_argument(x), -40.0f, 40.0f);
  const float e = std::exp(-2.0f * u);
  const float s = 1.0f / (1.0f + e);
  return s + 2.0f * x * (s * (e * s)) * kGeluSqrt2OverPi * (1.0f + 3.0f * kGeluCubic * x * x);
}

template <class Stored>
void forward(std::span<float> out, std::span<const Stored> inp) {
  const auto n = static_cast<std::int64_t>(out.size());
  float* o = out.data();
  const Stored* x = inp.data();
#pragma omp parallel for simd schedule(static)
  for (std::int64_t i = 0; i < n; ++i) o[i] = gelu_cpu(detail::widened(x[i]));
}

template <class Stored>
void backward(std::span<float> dinp, std::span<const Stored> inp, std::span<const float> dout) {
  const auto n = static_cast<std::int64_t>(dinp.size());
  float* g = dinp.data();
  const Stored* x = inp.data();
  const float* d = dout.data();
#pragma omp parallel for simd schedule(static)
  for (std::int64_t i = 0; i < n; ++i) g[i] = gelu_grad_cpu(detail::widened(x[i])) * d[i];
}

}  // namespace

void gelu_forward(std::span<float> out, std::span<const float> inp) { forward(out, inp); }

void gelu_forward(std::span<float> out, std::span<const std::uint16_t> inp_bf16) { forward(out, inp_bf16); }

void gelu_backward(std::span<float> dinp, std::span<const float> inp, std::span<const float> dout) {
  backward(dinp, inp, dout);
}

void gelu_backward(std::span<float> dinp, std::span<const std::uint16_t> inp_bf16, std::span<const float> dout) {
  backward(dinp, inp_bf16, dout);
}

}  // namespace lowcomm::kernels::cpu_backend
