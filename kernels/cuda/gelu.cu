// GELU, tanh approximation (gelu.hpp), on the GPU: one element per thread, the Reference's
// formulas as it writes them (kernels/cpu/gelu.cpp's gelu_reference and gelu_grad_reference: the
// same constants, the same order of operations, tanhf for std::tanh). With --fmad=false every
// multiply and add rounds as on the host, so results differ from the Reference only by tanhf's
// rounding against the host's (a few ulp), and are the same run to run.
#include <cstdint>
#include <span>

#include "cuda_memory.cuh"
#include "cuda_model_kernels.hpp"

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

__global__ void gelu_elements(const float* inp, std::int64_t count, float* out) {
  for (std::int64_t i = first_item(); i < count; i += item_stride()) out[i] = gelu(inp[i]);
}

// No __restrict__: dinp may be dout (each element is read and then written by the same thread).
__global__ void gelu_backward_elements(const float* inp, const float* dout, std::int64_t count, float* dinp) {
  for (std::int64_t i = first_item(); i < count; i += item_stride()) dinp[i] = gelu_slope(inp[i]) * dout[i];
}

}  // namespace

void gelu_forward(std::span<float> out, std::span<const float> inp) {
  const auto count = static_cast<std::int64_t>(out.size());
  const Input<float> x(inp);
  Output<float> y(out);  // overwritten: a host span is not copied in
  launch("gelu_forward", gelu_elements, count, x.data(), count, y.data());
  y.finish();
}

void gelu_backward(std::span<float> dinp, std::span<const float> inp, std::span<const float> dout) {
  const auto count = static_cast<std::int64_t>(dinp.size());
  const Input<float> x(inp);
  const Input<float> gradient(dout);
  // Overwritten, so not copied in. When dinp is a host dout, `gradient` is dout's own device copy,
  // which the kernel reads while writing this buffer.
  Output<float> result(dinp);
  launch("gelu_backward", gelu_backward_elements, count, x.data(), gradient.data(), count, result.data());
  result.finish();
}

}  // namespace lowcomm::kernels::cuda_backend
