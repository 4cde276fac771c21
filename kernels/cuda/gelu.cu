// GELU, tanh approximation (gelu.hpp), on the GPU: one element per thread, the Reference's
// formulas as it writes them (kernels/reference/gelu.cpp's gelu_reference and gelu_grad_reference: the
// same constants, the same order of operations, tanhf for std::tanh). With --fmad=false every
// multiply and add rounds as on the host, so results differ from the Reference only by tanhf's
// rounding against the host's (a few ulp), and are the same run to run. An input stored as bf16
// is widened as it is read.
#include <cstdint>
#include <span>

#include "cuda_memory.cuh"
#include "cuda_backend.hpp"
#include "../stored_values.hpp"

namespace lowcomm::kernels::cuda_backend {

namespace {

constexpr float kSqrt2OverPi = 0.7978845608028654f;
constexpr float kCubic = 0.044715f;

__device__ inline float cubic_argument(float x) { return kSqrt2OverPi * (x + kCubic * x * x * x); }

// 0.5·x·(1 + tanh u), u = sqrt(2/π)·(x + 0.044715·x³).
__device__ inline float gelu(float x) { return 0.5f * x * (1.0f + tanhf(cubic_argument(x))); }

// d/dx: 0.5·(1 + tanh u) + 0.5·x·(1 − tanh² u)·sqrt(2/π)·(1 + 3·0.044715·x²).
__device__ inline float gelu_slope(float x) {
  const float t = tanhf(cubic_argument(x));
  return 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * kSqrt2OverPi * (1.0f + 3.0f * kCubic * x * x);
}

// inp is fp32 or bf16 (../stored_values.hpp).
template <class Stored>
__global__ void gelu_elements(const Stored* inp, std::int64_t count, float* out) {
  for (std::int64_t i = first_item(); i < count; i += item_stride()) out[i] = gelu(detail::widened(inp[i]));
}

// No __restrict__: dinp may be dout (each element is read and then written by the same thread).
template <class Stored>
__global__ void gelu_backward_elements(const Stored* inp, const float* dout, std::int64_t count, float* dinp) {
  for (std::int64_t i = first_item(); i < count; i += item_stride()) {
    dinp[i] = gelu_slope(detail::widened(inp[i])) * dout[i];
  }
}

template <class Stored>
void gelu_forward_of(std::span<float> out, std::span<const Stored> inp) {
  const auto count = static_cast<std::int64_t>(out.size());
  const Input<Stored> x(inp);
  Output<float> y(out);  // overwritten: a host span is not copied in
  launch("gelu_forward", gelu_elements<Stored>, count, x.data(), count, y.data());
  y.finish();
}

template <class Stored>
void gelu_backward_of(std::span<float> dinp, std::span<const Stored> inp, std::span<const float> dout) {
  const auto count = static_cast<std::int64_t>(dinp.size());
  const Input<Stored> x(inp);
  const Input<float> gradient(dout);
  // Overwritten, so not copied in. When dinp is a host dout, `gradient` is dout's own device copy,
  // which the kernel reads while writing this buffer.
  Output<float> result(dinp);
  launch("gelu_backward", gelu_backward_elements<Stored>, count, x.data(), gradient.data(), count, result.data());
  result.finish();
}

}  // namespace

void gelu_forward(std::span<float> out, std::span<const float> inp) { gelu_forward_of(out, inp); }
void gelu_forward(std::span<float> out, std::span<const std::uint16_t> inp_bf16) { gelu_forward_of(out, inp_bf16); }

void gelu_backward(std::span<float> dinp, std::span<const float> inp, std::span<const float> dout) {
  gelu_backward_of(dinp, inp, dout);
}
void gelu_backward(std::span<float> dinp, std::span<const std::uint16_t> inp_bf16, std::span<const float> dout) {
  gelu_backward_of(dinp, inp_bf16, dout);
}

}  // namespace lowcomm::kernels::cuda_backend
