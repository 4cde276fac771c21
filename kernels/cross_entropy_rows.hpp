#pragma once
// cross_entropy.hpp's rows on the host, shared by the Reference (scalar loops) and the Cpu
// backend (vectorised loops). Each row: max, Σ exp(x − max), loss = log Σ + max − x[target]. The
// fused pass writes exp(x − max) into dlogits while summing (the row's one exp per element), then
// scales it in place; that is also why dlogits may alias logits: element v is read before it is
// written, and only once.
#include <cmath>
#include <cstdint>

namespace lowcomm::kernels::detail {

template <bool Vectorised>
float logits_row_max(const float* x, std::int64_t V) {
  float max = -INFINITY;
  if constexpr (Vectorised) {
#pragma omp simd reduction(max : max)
    for (std::int64_t v = 0; v < V; ++v) max = x[v] > max ? x[v] : max;
  } else {
    for (std::int64_t v = 0; v < V; ++v) max = x[v] > max ? x[v] : max;
  }
  return max;
}

// Σ exp(x − max), also storing the exponentials in e when it is not null.
template <bool Vectorised>
float logits_exp_sum(const float* x, float* e, float max, std::int64_t V) {
  float sum = 0.0f;
  if constexpr (Vectorised) {
    if (e != nullptr) {
#pragma omp simd reduction(+ : sum)
      for (std::int64_t v = 0; v < V; ++v) {
        const float p = std::exp(x[v] - max);
        e[v] = p;
        sum += p;
      }
    } else {
#pragma omp simd reduction(+ : sum)
      for (std::int64_t v = 0; v < V; ++v) sum += std::exp(x[v] - max);
    }
  } else {
    for (std::int64_t v = 0; v < V; ++v) {
      const float p = std::exp(x[v] - max);
      if (e != nullptr) e[v] = p;
      sum += p;
    }
  }
  return sum;
}

// One row's loss, and its gradient times `scale` into dlogits unless that is null.
template <bool Vectorised>
void cross_entropy_row(float* loss, float* dlogits, const float* logits, std::int32_t target, std::int64_t V,
                       float scale) {
  const float max = logits_row_max<Vectorised>(logits, V);
  const float target_logit = logits[target];  // read before an in-place dlogits overwrites it
  const float sum = logits_exp_sum<Vectorised>(logits, dlogits, max, V);
  *loss = std::log(sum) + max - target_logit;
  if (dlogits == nullptr) return;
  const float factor = scale / sum;
#pragma omp simd
  for (std::int64_t v = 0; v < V; ++v) dlogits[v] *= factor;
  dlogits[target] -= scale;
}

}  // namespace lowcomm::kernels::detail
