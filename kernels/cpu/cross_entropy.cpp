// Softmax cross-entropy (include/lowcomm/kernels/cross_entropy.hpp). Each row: max, Σ exp(x −
// max), loss = log Σ + max − x[target]. The fused pass writes exp(x − max) into dlogits while
// summing (the row's one exp per element), then scales it in place; that is also why dlogits may
// alias logits: element v is read before it is written, and only once.
#include "lowcomm/kernels/cross_entropy.hpp"

#include <cmath>

#include "transformer_checks.hpp"
#if LOWCOMM_HAVE_CUDA
#include "../cuda/cuda_model_kernels.hpp"
#endif

namespace lowcomm::kernels {
namespace {

void check(std::string_view kernel, std::size_t logits, std::span<const std::int32_t> targets,
           std::size_t losses, std::int64_t N, std::int64_t V) {
  detail::check_dims(kernel, {N, V});
  detail::check_size(kernel, "logits (N × V)", logits, detail::product(kernel, N, V));
  detail::check_size(kernel, "losses (N)", losses, N);
  if (targets.size() != static_cast<std::uint64_t>(N)) {
    throw Error(fmt::format("{}: targets holds {} values, expected N = {}", kernel, targets.size(), N));
  }
  for (std::int64_t n = 0; n < N; ++n) {
    if (targets[n] < 0 || targets[n] >= V) {
      throw Error(fmt::format("{}: target {} at row {} is outside the vocabulary [0, {})", kernel,
                              targets[n], n, V));
    }
  }
}

template <bool Vectorised>
float row_max(const float* x, std::int64_t V) {
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
float exp_sum(const float* x, float* e, float max, std::int64_t V) {
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

template <bool Vectorised>
void row(float* loss, float* dlogits, const float* logits, std::int32_t target, std::int64_t V,
         float scale) {
  const float max = row_max<Vectorised>(logits, V);
  const float target_logit = logits[target];  // read before an in-place dlogits overwrites it
  const float sum = exp_sum<Vectorised>(logits, dlogits, max, V);
  *loss = std::log(sum) + max - target_logit;
  if (dlogits == nullptr) return;
  const float factor = scale / sum;
#pragma omp simd
  for (std::int64_t v = 0; v < V; ++v) dlogits[v] *= factor;
  dlogits[target] -= scale;
}

template <bool Vectorised>
void rows(float* losses, float* dlogits, const float* logits, const std::int32_t* targets,
          std::int64_t N, std::int64_t V, float scale) {
  if constexpr (Vectorised) {
#pragma omp parallel for schedule(static)
    for (std::int64_t n = 0; n < N; ++n) {
      row<true>(&losses[n], dlogits ? dlogits + n * V : nullptr, logits + n * V, targets[n], V, scale);
    }
  } else {
    for (std::int64_t n = 0; n < N; ++n) {
      row<false>(&losses[n], dlogits ? dlogits + n * V : nullptr, logits + n * V, targets[n], V, scale);
    }
  }
}

}  // namespace

void cross_entropy_forward(Backend backend, std::span<float> losses, std::span<const float> logits,
                           std::span<const std::int32_t> targets, std::int64_t N, std::int64_t V) {
  check("cross_entropy_forward", logits.size(), targets, losses.size(), N, V);
  switch (backend) {
    case Backend::Reference:
      return rows<false>(losses.data(), nullptr, logits.data(), targets.data(), N, V, 0.0f);
    case Backend::Cpu:
      return rows<true>(losses.data(), nullptr, logits.data(), targets.data(), N, V, 0.0f);
    case Backend::Kokkos: break;
    case Backend::Cuda:
#if LOWCOMM_HAVE_CUDA
      return cuda_backend::cross_entropy_forward(losses, logits, targets, N, V);
#endif
      break;
  }
  unsupported("cross_entropy_forward", backend);
}

void cross_entropy_forward_backward(Backend backend, std::span<float> losses,
                                    std::span<float> dlogits, std::span<const float> logits,
                                    std::span<const std::int32_t> targets, std::int64_t N,
                                    std::int64_t V, float scale) {
  constexpr std::string_view kernel = "cross_entropy_forward_backward";
  check(kernel, logits.size(), targets, losses.size(), N, V);
  detail::check_size(kernel, "dlogits (N × V)", dlogits.size(), N * V);
  if (!std::isfinite(scale)) throw Error(fmt::format("{}: scale must be finite, got {}", kernel, scale));
  switch (backend) {
    case Backend::Reference:
      return rows<false>(losses.data(), dlogits.data(), logits.data(), targets.data(), N, V, scale);
    case Backend::Cpu:
      return rows<true>(losses.data(), dlogits.data(), logits.data(), targets.data(), N, V, scale);
    case Backend::Kokkos: break;
    case Backend::Cuda:
#if LOWCOMM_HAVE_CUDA
      return cuda_backend::cross_entropy_forward_backward(losses, dlogits, logits, targets, N, V, scale);
#endif
      break;
  }
  unsupported(kernel, backend);
}

}  // namespace lowcomm::kernels
