// gelu.hpp's definition: GELU's tanh form and its derivative as written (../gelu_rows.hpp).
// One template for both storages of inp (../stored_values.hpp).
#include <cmath>
#include <cstdint>

#include "../backend_kernels.hpp"
#include "../gelu_rows.hpp"
#include "../stored_values.hpp"

namespace lowcomm::kernels::reference_backend {

namespace {

using detail::gelu_cubic_argument;
using detail::kGeluCubic;
using detail::kGeluSqrt2OverPi;

inline float gelu_reference(float x) {
  return 0.5f * x * (1.0f + std::tanh(gelu_cubic_argument(x)));
}

// d/dx: 0.5·(1 + tanh u) + 0.5·x·(1 − tanh² u)·sqrt(2/π)·(1 + 3·0.044715·x²).
inline float gelu_grad_reference(float x) {
  const float t = std::tanh(gelu_cubic_argument(x));
  return 0.5f * (1.0f + t) +
         0.5f * x * (1.0f - t * t) * kGeluSqrt2OverPi * (1.0f + 3.0f * kGeluCubic * x * x);
}

template <class Stored>
void forward(std::span<float> out, std::span<const Stored> inp) {
  const auto n = static_cast<std::int64_t>(out.size());
  float* o = out.data();
  const Stored* x = inp.data();
  for (std::int64_t i = 0; i < n; ++i) o[i] = gelu_reference(detail::widened(x[i]));
}

template <class Stored>
void backward(std::span<float> dinp, std::span<const Stored> inp, std::span<const float> dout) {
  const auto n = static_cast<std::int64_t>(dinp.size());
  float* g = dinp.data();
  const Stored* x = inp.data();
  const float* d = dout.data();
  for (std::int64_t i = 0; i < n; ++i) g[i] = gelu_grad_reference(detail::widened(x[i])) * d[i];
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

}  // namespace lowcomm::kernels::reference_backend
