// elementwise.hpp's maps on the GPU, one element per thread, each the Reference's rule
// (../elementwise_rules.hpp: sign as (x > 0) − (x < 0), so +0 for both zeros and NaN). The output
// may be an input itself: each element is read, then written, by one thread. Device and managed
// spans are used in place, host spans staged (cuda_runtime.hpp).
#include "../elementwise_rules.hpp"
#include "cuda_memory.cuh"

namespace lowcomm::kernels::cuda_backend {

namespace {

__global__ void fill_kernel(float* out, std::int64_t n, float value) {
  for (std::int64_t i = first_item(); i < n; i += item_stride()) out[i] = value;
}

__global__ void sign_kernel(const float* in, std::int64_t n, float* out) {
  for (std::int64_t i = first_item(); i < n; i += item_stride()) out[i] = sign_of(in[i]);
}

__global__ void scale_kernel(float alpha, const float* in, std::int64_t n, float* out) {
  for (std::int64_t i = first_item(); i < n; i += item_stride()) out[i] = scaled(alpha, in[i]);
}

__global__ void scale_add_kernel(float alpha, const float* a, const float* b, std::int64_t n, float* out) {
  for (std::int64_t i = first_item(); i < n; i += item_stride()) out[i] = scaled_sum(alpha, a[i], b[i]);
}

__global__ void subtract_kernel(const float* a, const float* b, std::int64_t n, float* out) {
  for (std::int64_t i = first_item(); i < n; i += item_stride()) out[i] = difference(a[i], b[i]);
}

__global__ void sign_step_kernel(float alpha, const float* g, std::int64_t n, float* x) {
  for (std::int64_t i = first_item(); i < n; i += item_stride()) x[i] = sign_step(alpha, g[i], x[i]);
}

}  // namespace

// A host span that is both input and output is staged twice (an Input copy and an Output buffer),
// which is still correct: the kernel reads the one and writes the other.
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

void scale(float alpha, std::span<const float> in, std::span<float> out) {
  const Input<float> values(in);
  Output<float> result(out);
  const auto n = static_cast<std::int64_t>(out.size());
  launch("scale", scale_kernel, n, alpha, values.data(), n, result.data());
  result.finish();
}

void scale_add(float alpha, std::span<const float> a, std::span<const float> b, std::span<float> out) {
  const Input<float> x(a), y(b);
  Output<float> result(out);
  const auto n = static_cast<std::int64_t>(out.size());
  launch("scale_add", scale_add_kernel, n, alpha, x.data(), y.data(), n, result.data());
  result.finish();
}

void subtract(std::span<const float> a, std::span<const float> b, std::span<float> out) {
  const Input<float> x(a), y(b);
  Output<float> result(out);
  const auto n = static_cast<std::int64_t>(out.size());
  launch("subtract", subtract_kernel, n, x.data(), y.data(), n, result.data());
  result.finish();
}

void subtract_scaled_sign(float alpha, std::span<const float> g, std::span<float> x) {
  const Input<float> signs_of(g);
  Output<float> result(x, true);
  const auto n = static_cast<std::int64_t>(x.size());
  launch("subtract_scaled_sign", sign_step_kernel, n, alpha, signs_of.data(), n, result.data());
  result.finish();
}

}  // namespace lowcomm::kernels::cuda_backend
