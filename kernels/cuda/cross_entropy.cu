// Softmax cross-entropy (cross_entropy.hpp) on the GPU, one thread block per row, the Reference's
// arithmetic: max, Σ exp(x − max), loss = log Σ + max − x[target], and for the fused pass
// dlogits = exp(x − max) · (scale / Σ), minus scale at the target.
//
// Each reduction has every thread reduce a strided slice of the row in order, then a fixed tree
// (shuffles within each warp, then across the warps' results) combine the slices. The max is the
// Reference's: its x > max ? x : max skips NaNs and gives the same value in any order, up to the
// sign of a zero maximum, which no result shows. The sum differs from the Reference's index-order
// sum by float rounding only. Both are the same bits run to run. No element of dlogits is written
// before the row's max and sum are known (two barriers later), and each is then written by the
// one thread that reads it in that pass, which is what lets dlogits be logits itself. exp(x − max)
// is recomputed for dlogits rather than kept: expf gives the same bits both times, so this is the
// Reference's stored exponential.
#include <cmath>
#include <cstdint>
#include <span>

#include "cuda_block_reduce.cuh"
#include "cuda_backend.hpp"

namespace lowcomm::kernels::cuda_backend {

namespace {

// One block per row (grid-striding over rows). dlogits null: the losses only. No __restrict__:
// dlogits may be logits.
__global__ void cross_entropy_rows(const float* logits, const std::int32_t* targets, std::int64_t N, std::int64_t V,
                                   float scale, float* losses, float* dlogits) {
  for (std::int64_t n = blockIdx.x; n < N; n += gridDim.x) {
    const float* x = logits + n * V;
    const std::int64_t target = targets[n];
    // Read before the barriers below, so before an in-place dlogits overwrites it.
    const float target_logit = x[target];
    float max = -INFINITY;
    for (std::int64_t v = threadIdx.x; v < V; v += blockDim.x) max = Larger{}(max, x[v]);
    max = block_reduce(max, -INFINITY, Larger{});
    float sum = 0.0f;
    for (std::int64_t v = threadIdx.x; v < V; v += blockDim.x) sum += expf(x[v] - max);
    sum = block_reduce(sum, 0.0f, Sum{});
    if (threadIdx.x == 0) losses[n] = logf(sum) + max - target_logit;
    if (dlogits == nullptr) continue;
    const float factor = scale / sum;
    float* d = dlogits + n * V;
    for (std::int64_t v = threadIdx.x; v < V; v += blockDim.x) {
      const float gradient = expf(x[v] - max) * factor;
      d[v] = v == target ? gradient - scale : gradient;
    }
  }
}

// Both entry points: dlogits empty (so its data() null) for the forward pass alone. With N > 0
// the fused pass's dlogits is not empty: every target lies in [0, V), so V > 0.
void rows(std::span<float> losses, std::span<float> dlogits, std::span<const float> logits,
          std::span<const std::int32_t> targets, std::int64_t N, std::int64_t V, float scale, const char* name) {
  if (N == 0) return;  // no rows: nothing to write
  const Input<float> x(logits);
  const Input<std::int32_t> target(targets);
  // Overwritten, so not copied in; when dlogits is a host logits, `x` is its own device copy.
  Output<float> loss(losses);
  Output<float> gradient(dlogits);
  cross_entropy_rows<<<row_blocks(N), kThreads, 0, stream()>>>(x.data(), target.data(), N, V, scale, loss.data(),
                                                             gradient.data());
  check(cudaGetLastError(), name);
  loss.finish();
  gradient.finish();
}

}  // namespace

void cross_entropy_forward(std::span<float> losses, std::span<const float> logits,
                           std::span<const std::int32_t> targets, std::int64_t N, std::int64_t V) {
  rows(losses, {}, logits, targets, N, V, 0.0f, "cross_entropy_forward");
}

void cross_entropy_forward_backward(std::span<float> losses, std::span<float> dlogits, std::span<const float> logits,
                                    std::span<const std::int32_t> targets, std::int64_t N, std::int64_t V,
                                    float scale) {
  rows(losses, dlogits, logits, targets, N, V, scale, "cross_entropy_forward_backward");
}

}  // namespace lowcomm::kernels::cuda_backend
