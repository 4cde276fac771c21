// elementwise.hpp's maps on the GPU, one element per thread: fill, and sign as the Cpu kernel
// computes it ((x > 0) − (x < 0): +1, −1, or +0 for both zeros and NaN, the Reference's bits).
#include "cuda_memory.cuh"

namespace lowcomm::kernels::cuda_backend {

namespace {

__global__ void fill_kernel(float* out, std::int64_t n, float value) {
  for (std::int64_t i = first_item(); i < n; i += item_stride()) out[i] = value;
}

// in may be out (in place): each element is read, then written, by one thread.
__global__ void sign_kernel(const float* in, std::int64_t n, float* out) {
  for (std::int64_t i = first_item(); i < n; i += item_stride()) {
    const float x = in[i];
    out[i] = static_cast<float>(x > 0.0f) - static_cast<float>(x < 0.0f);
  }
}

}  // namespace

void fill(std::span<float> out, float value) {
  Output<float> result(out);
  const auto n = static_cast<std::int64_t>(out.size());
  launch("fill", fill_kernel, n, result.data(), n, value);
  result.finish();
}

void sign(std::span<const float> in, std::span<float> out) {
  const Input<float> values(in);
  Output<float> signs(out);
  const auto n = static_cast<std::int64_t>(out.size());
  launch("sign", sign_kernel, n, values.data(), n, signs.data());
  signs.finish();
}

}  // namespace lowcomm::kernels::cuda_backend
