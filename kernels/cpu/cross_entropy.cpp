// cross_entropy.hpp on the Cpu backend: the Reference's rows (../cross_entropy_rows.hpp) with
// vectorised loops, the rows split between threads.
#include "../backend_kernels.hpp"
#include "../cross_entropy_rows.hpp"

namespace lowcomm::kernels::cpu_backend {

namespace {

void rows(float* losses, float* dlogits, const float* logits, const std::int32_t* targets, std::int64_t N,
          std::int64_t V, float scale) {
#pragma omp parallel for schedule(static)
  for (std::int64_t n = 0; n < N; ++n) {
    detail::cross_entropy_row<true>(&losses[n], dlogits ? dlogits + n * V : nullptr, logits + n * V, targets[n],
                                    V, scale);
  }
}

}  // namespace

void cross_entropy_forward(std::span<float> losses, std::span<const float> logits,
                           std::span<const std::int32_t> targets, std::int64_t N, std::int64_t V) {
  rows(losses.data(), nullptr, logits.data(), targets.data(), N, V, 0.0f);
}

void cross_entropy_forward_backward(std::span<float> losses, std::span<float> dlogits, std::span<const float> logits,
                                    std::span<const std::int32_t> targets, std::int64_t N, std::int64_t V,
                                    float scale) {
  rows(losses.data(), dlogits.data(), logits.data(), targets.data(), N, V, scale);
}

}  // namespace lowcomm::kernels::cpu_backend
