#pragma once
// layernorm.hpp's rows on the host, shared by the Reference (textbook formulas in float, index
// order) and the Cpu backend (the same per row with `omp simd` reductions, Vectorised). The
// parameter gradients sum over rows: parameter_grads takes a range of columns, so the Cpu backend
// splits the columns between threads, no two threads ever write one float and the row order of
// the sums is fixed.
#include <cmath>
#include <cstdint>

namespace lowcomm::kernels::detail {

// One row, forward; Vectorised selects the omp simd reductions.
template <bool Vectorised>
inline void forward_row(float* out, float* mean_out, float* rstd_out, const float* x, const float* w,
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
inline void backward_row(float* dx, const float* dy, const float* x, const float* w, float m, float s,
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
inline void parameter_grads(float* dw, float* db, const float* dout, const float* inp, const float* mean,
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

}  // namespace lowcomm::kernels::detail
