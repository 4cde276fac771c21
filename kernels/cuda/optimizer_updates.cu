// optimizer_updates.hpp's updates on the GPU, one element per thread, each the Reference's rule
// (../optimizer_update_rules.hpp; --fmad=false and IEEE sqrt and division, nvcc's defaults, give
// its bits). With the model's managed buffers and the optimizer's state in managed memory
// (memory.hpp) nothing is copied; host spans are staged per call.
#include "../optimizer_update_rules.hpp"
#include "cuda_memory.cuh"

namespace lowcomm::kernels::cuda_backend {

namespace {

__global__ void adamw_kernel(AdamWScalars s, std::int64_t n, float* p, const float* g, float* m, float* v) {
  for (std::int64_t i = first_item(); i < n; i += item_stride()) adamw_element(s, p[i], g[i], m[i], v[i]);
}

__global__ void sgd_kernel(SgdScalars s, std::int64_t n, float* p, const float* g, float* buffer) {
  for (std::int64_t i = first_item(); i < n; i += item_stride()) {
    sgd_element(s, p[i], g[i], s.momentum ? buffer + i : nullptr);
  }
}

__global__ void signum_kernel(SignumScalars s, std::int64_t n, float* p, const float* g, float* m) {
  for (std::int64_t i = first_item(); i < n; i += item_stride()) signum_element(s, p[i], g[i], m[i]);
}

}  // namespace

void adamw_update(const AdamWScalars& s, std::span<float> param, std::span<const float> grad,
                  std::span<float> exp_avg, std::span<float> exp_avg_sq) {
  const Input<float> g(grad);
  Output<float> p(param, true), m(exp_avg, true), v(exp_avg_sq, true);
  const auto n = static_cast<std::int64_t>(param.size());
  launch("adamw_update", adamw_kernel, n, s, n, p.data(), g.data(), m.data(), v.data());
  p.finish();
  m.finish();
  v.finish();
}

void sgd_update(const SgdScalars& s, std::span<float> param, std::span<const float> grad, std::span<float> buffer) {
  const Input<float> g(grad);
  Output<float> p(param, true), b(buffer, true);
  const auto n = static_cast<std::int64_t>(param.size());
  launch("sgd_update", sgd_kernel, n, s, n, p.data(), g.data(), b.data());
  p.finish();
  b.finish();
}

void signum_update(const SignumScalars& s, std::span<float> param, std::span<const float> grad,
                   std::span<float> momentum) {
  const Input<float> g(grad);
  Output<float> p(param, true), m(momentum, true);
  const auto n = static_cast<std::int64_t>(param.size());
  launch("signum_update", signum_kernel, n, s, n, p.data(), g.data(), m.data());
  p.finish();
  m.finish();
}

}  // namespace lowcomm::kernels::cuda_backend
