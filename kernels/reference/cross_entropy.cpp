// cross_entropy.hpp's definition: the rows in order, scalar loops (../cross_entropy_rows.hpp).
#include "../backend_kernels.hpp"
#include "../cross_entropy_rows.hpp"

namespace lowcomm::kernels::reference_backend {

namespace {

void rows(float* losses, float* dlogits, const float* logits, const std::int32_t* targets, std::int64_t N,
          std::int64_t V, float scale) {
  for (std::int64_t n = 0; n < N; ++n) {
    detail::cross_entropy_row<false>(&losses[n], dlogits ? dlogits + n * V : nullptr, logits + n * V, targets[n],
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

}  // namespace lowcomm::kernels::reference_backend
