// Layer normalisation (include/lowcomm/kernels/layernorm.hpp). Reference follows the textbook
// formulas in float, index order; Cpu computes the same per row with `omp simd` reductions
// (vectorised partial sums) and splits rows between threads; the parameter gradients, which sum
// over rows, are reduced in a second pass with the columns split instead, so no two threads ever
// write one float and the row order of the sums is fixed.
#include "lowcomm/kernels/layernorm.hpp"

#include <omp.h>

#include <cmath>

#include "transformer_checks.hpp"
#if LOWCOMM_HAVE_CUDA
#include "../cuda/cuda_model_kernels.hpp"
#endif

namespace lowcomm::kernels {
namespace {

void check_common(std::string_view kernel, std::int64_t N, std::int64_t C, std::size_t weight,
                  std::size_t bias, std::size_t mean, std::size_t rstd) {
  detail::check_dims(kernel, {N, C});
  detail::check_size(kernel, "weight (C)", weight, C);
  detail::check_size(kernel, "bias (C)", bias, C);
  detail::check_size(kernel, "mean (N)", mean, N);
  detail::check_size(kernel, "rstd (N)", rstd, N);
}

// One row, forward; Vectorised selects the omp simd reductions.
template <bool Vectorised>
void forward_row(float* out, float* mean_out, float* rstd_out, const float* x, const float* w,
                 const float* b, std::int64_t C, float eps) {
  float sum = 0.0f;
  if constexpr (Vectorised) {
#pragma omp simd reduction(+ : sum)
    for (std::int64_t c = 0; c < C; ++c) sum += x[c];
  } else {
    for (std::int64_t c = 0; c < C; ++c) sum += x[c];
  }
  const float m = sum / static_cast<float>(C);
  float squares = 0.0f;
  if constexpr (Vectorised) {
#pragma omp simd reduction(+ : squares)
    for (std::int64_t c = 0; c < C; ++c) squares += (x[c] - m) * (x[c] - m);
  } else {
    for (std::int64_t c = 0; c < C; ++c) squares += (x[c] - m) * (x[c] - m);
  }
  const float s = 1.0f / std::sqrt(squares / static_cast<float>(C) + eps);
#pragma omp simd
  for (std::int64_t c = 0; c < C; ++c) out[c] = (x[c] - m) * s * w[c] + b[c];
  *mean_out = m;
  *rstd_out = s;
}

// dx = rstd · (dx̂ − mean(dx̂) − x̂ · mean(dx̂ · x̂)), with dx̂ = dout · weight; accumulated into dinp.
template <bool Vectorised>
void backward_row(float* dx, const float* dy, const float* x, const float* w, float m, float s,
                  std::int64_t C) {
  float dnorm_mean = 0.0f;
  float dnorm_norm_mean = 0.0f;
  if constexpr (Vectorised) {
#pragma omp simd reduction(+ : dnorm_mean, dnorm_norm_mean)
    for (std::int64_t c = 0; c < C; ++c) {
      const float dnorm = w[c] * dy[c];
      dnorm_mean += dnorm;
      dnorm_norm_mean += dnorm * ((x[c] - m) * s);
    }
  } else {
    for (std::int64_t c = 0; c < C; ++c) {
      const float dnorm = w[c] * dy[c];
      dnorm_mean += dnorm;
      dnorm_norm_mean += dnorm * ((x[c] - m) * s);
    }
  }
  dnorm_mean /= static_cast<float>(C);
  dnorm_norm_mean /= static_cast<float>(C);
#pragma omp simd
  for (std::int64_t c = 0; c < C; ++c) {
    const float norm = (x[c] - m) * s;
    dx[c] += s * (w[c] * dy[c] - dnorm_mean - norm * dnorm_norm_mean);
  }
}

// dweight/dbias for columns [c0, c1), rows in order.
void parameter_grads(float* dw, float* db, const float* dout, const float* inp, const float* mean,
                     const float* rstd, std::int64_t N, std::int64_t C, std::int64_t c0,
                     std::int64_t c1) {
  for (std::int64_t n = 0; n < N; ++n) {
    const float* dy = dout + n * C;
    const float* x = inp + n * C;
    const float m = mean[n];
    const float s = rstd[n];
#pragma omp simd
    for (std::int64_t c = c0; c < c1; ++c) {
      dw[c] += dy[c] * ((x[c] - m) * s);
      db[c] += dy[c];
    }
  }
}

}  // namespace

void layernorm_forward(Backend backend, std::span<float> out, std::span<float> mean,
                       std::span<float> rstd, std::span<const float> inp,
                       std::span<const float> weight, std::span<const float> bias, std::int64_t N,
                       std::int64_t C, float eps) {
  constexpr std::string_view kernel = "layernorm_forward";
  check_common(kernel, N, C, weight.size(), bias.size(), mean.size(), rstd.size());
  const std::int64_t size = detail::product(kernel, N, C);
  detail::check_size(kernel, "inp (N × C)", inp.size(), size);
  detail::check_size(kernel, "out (N × C)", out.size(), size);
  if (!(eps > 0.0f) || !std::isfinite(eps)) {
    throw Error(fmt::format("{}: eps must be finite and > 0, got {}", kernel, eps));
  }
  switch (backend) {
    case Backend::Reference:
      for (std::int64_t n = 0; n < N; ++n) {
        forward_row<false>(out.data() + n * C, &mean[n], &rstd[n], inp.data() + n * C,
                           weight.data(), bias.data(), C, eps);
      }
      return;
    case Backend::Cpu:
#pragma omp parallel for schedule(static)
      for (std::int64_t n = 0; n < N; ++n) {
        forward_row<true>(out.data() + n * C, &mean[n], &rstd[n], inp.data() + n * C,
                          weight.data(), bias.data(), C, eps);
      }
      return;
    case Backend::Kokkos: break;
    case Backend::Cuda:
#if LOWCOMM_HAVE_CUDA
      return cuda_backend::layernorm_forward(out, mean, rstd, inp, weight, bias, N, C, eps);
#endif
      break;
  }
  unsupported(kernel, backend);
}

void layernorm_backward(Backend backend, std::span<float> dinp, std::span<float> dweight,
                        std::span<float> dbias, std::span<const float> dout,
                        std::span<const float> inp, std::span<const float> weight,
                        std::span<const float> mean, std::span<const float> rstd, std::int64_t N,
                        std::int64_t C) {
  constexpr std::string_view kernel = "layernorm_backward";
  check_common(kernel, N, C, weight.size(), dbias.size(), mean.size(), rstd.size());
  detail::check_size(kernel, "dweight (C)", dweight.size(), C);
  const std::int64_t size = detail::product(kernel, N, C);
  detail::check_size(kernel, "dinp (N × C)", dinp.size(), size);
  detail::check_size(kernel, "dout (N × C)", dout.size(), size);
  detail::check_size(kernel, "inp (N × C)", inp.size(), size);
  switch (backend) {
    case Backend::Reference:
      for (std::int64_t n = 0; n < N; ++n) {
        backward_row<false>(dinp.data() + n * C, dout.data() + n * C, inp.data() + n * C,
                            weight.data(), mean[n], rstd[n], C);
      }
      parameter_grads(dweight.data(), dbias.data(), dout.data(), inp.data(), mean.data(),
                      rstd.data(), N, C, 0, C);
      return;
    case Backend::Cpu:
#pragma omp parallel
    {
#pragma omp for schedule(static)
      for (std::int64_t n = 0; n < N; ++n) {
        backward_row<true>(dinp.data() + n * C, dout.data() + n * C, inp.data() + n * C,
                           weight.data(), mean[n], rstd[n], C);
      }
      const std::int64_t threads = omp_get_num_threads();
      const std::int64_t id = omp_get_thread_num();
      parameter_grads(dweight.data(), dbias.data(), dout.data(), inp.data(), mean.data(),
                      rstd.data(), N, C, C * id / threads, C * (id + 1) / threads);
    }
      return;
    case Backend::Kokkos: break;
    case Backend::Cuda:
#if LOWCOMM_HAVE_CUDA
      return cuda_backend::layernorm_backward(dinp, dweight, dbias, dout, inp, weight, mean, rstd, N, C);
#endif
      break;
  }
  unsupported(kernel, backend);
}

}  // namespace lowcomm::kernels
