// Lee's fast DCT over lanes (fast_dct.hpp).
#include "fast_dct.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numbers>

#include "lowcomm/core/simd_clones.hpp"
#include "lowcomm/error.hpp"

namespace lowcomm::kernels::cpu_backend {

namespace {

using Level = FastDct::Level;

std::int64_t odd_part(std::int64_t n) {
  while (n % 2 == 0) n /= 2;
  return n;
}

// Below level 0 every row operation runs over one strip: a constant trip count, so that each is a
// few vector instructions with no loop set-up.
constexpr std::int64_t lanes = FastDct::kStrip;

// Row r of a lane matrix.
inline const float* row(const float* base, std::int64_t stride, std::int64_t r) { return base + r * stride; }
inline float* row(float* base, std::int64_t stride, std::int64_t r) { return base + r * stride; }

// out row k = Σ_i basis[k][i] · in row i (an odd length's dense basis).
inline void dense_forward(const Level& level, const float* in, std::int64_t is, float* out, std::int64_t os) {
  const std::int64_t n = level.n;
  for (std::int64_t k = 0; k < n; ++k) {
    float* o = row(out, os, k);
    std::fill(o, o + lanes, 0.0f);
    for (std::int64_t i = 0; i < n; ++i) {
      const float c = level.basis[static_cast<std::size_t>(k * n + i)];
      const float* x = row(in, is, i);
#pragma omp simd
      for (std::int64_t j = 0; j < lanes; ++j) o[j] += c * x[j];
    }
  }
}

// out row i = Σ_k basis[k][i] · in row k.
inline void dense_inverse(const Level& level, const float* in, std::int64_t is, float* out, std::int64_t os) {
  const std::int64_t n = level.n;
  for (std::int64_t i = 0; i < n; ++i) {
    float* o = row(out, os, i);
    std::fill(o, o + lanes, 0.0f);
    for (std::int64_t k = 0; k < n; ++k) {
      const float c = level.basis[static_cast<std::size_t>(k * n + i)];
      const float* y = row(in, is, k);
#pragma omp simd
      for (std::int64_t j = 0; j < lanes; ++j) o[j] += c * y[j];
    }
  }
}

// The unnormalised transforms of level->n rows of one strip. Scratch: 3·n/2 rows for the level,
// then the next level's. The clones that the recursion re-enters for the lengths it does not
// unroll (defined below).
LOWCOMM_SIMD_CLONES
void forward_rows(const Level* level, const float* in, std::int64_t is, float* out, std::int64_t os, float* scratch);
LOWCOMM_SIMD_CLONES
void inverse_rows(const Level* level, const float* in, std::int64_t is, float* out, std::int64_t os, float* scratch);

// One level of the forward recursion for an even length: N at compile time for the powers of two
// up to 32, which are unrolled down to the leaves inside the caller's clone (a call per node would
// cost more than its work), with their intermediates in a local array the compiler can keep in
// vector registers, as no other pointer reaches it; N = 0 reads the length from the level and
// recurses through forward_rows.
template <int N>
[[gnu::always_inline]] inline void forward_step(const Level* level, const float* in, std::int64_t is, float* out,
                                                std::int64_t os, float* scratch) {
  const float* factors = level->factors.data();
  if constexpr (N == 2) {
    const float f = factors[0];
    const float* x0 = row(in, is, 0);
    const float* x1 = row(in, is, 1);
    float* y0 = row(out, os, 0);
    float* y1 = row(out, os, 1);
#pragma omp simd
    for (std::int64_t j = 0; j < lanes; ++j) {
      y0[j] = x0[j] + x1[j];
      y1[j] = f * (x0[j] - x1[j]);
    }
  } else {
    const std::int64_t n = N > 0 ? N : level->n;
    const std::int64_t m = n / 2;
    [[maybe_unused]] alignas(64) float local[N > 0 ? 3 * (N / 2) * lanes : 1];
    float* a = N > 0 ? local : scratch;
    float* b = a + m * lanes;
    float* sums = a + 2 * m * lanes;  // B, the transform of b
    float* next_scratch = N > 0 ? scratch : scratch + 3 * m * lanes;
    for (std::int64_t i = 0; i < m; ++i) {
      const float f = factors[i];
      const float* x = row(in, is, i);
      const float* mirror = row(in, is, n - 1 - i);
      float* ai = row(a, lanes, i);
      float* bi = row(b, lanes, i);
#pragma omp simd
      for (std::int64_t j = 0; j < lanes; ++j) {
        ai[j] = x[j] + mirror[j];
        bi[j] = f * (x[j] - mirror[j]);
      }
    }
    // X[2k] = A[k], written straight into the even rows of out.
    const Level* next = level + 1;
    if constexpr (N > 0) {
      forward_step<N / 2>(next, a, lanes, out, 2 * os, next_scratch);
      forward_step<N / 2>(next, b, lanes, sums, lanes, next_scratch);
    } else {
      forward_rows(next, a, lanes, out, 2 * os, next_scratch);
      forward_rows(next, b, lanes, sums, lanes, next_scratch);
    }
    for (std::int64_t k = 0; k + 1 < m; ++k) {
      const float* bk = row(sums, lanes, k);
      const float* bk1 = row(sums, lanes, k + 1);
      float* y = row(out, os, 2 * k + 1);
#pragma omp simd
      for (std::int64_t j = 0; j < lanes; ++j) y[j] = bk[j] + bk1[j];
    }
    std::copy_n(row(sums, lanes, m - 1), lanes, row(out, os, n - 1));
  }
}

// The transposed graph of forward_step: A[k] = in[2k] and B[k] = in[2k+1] + in[2k-1] through the
// half-length inverses into a and b, then out[i] = a[i] + f·b[i], out[n-1-i] = a[i] - f·b[i].
template <int N>
[[gnu::always_inline]] inline void inverse_step(const Level* level, const float* in, std::int64_t is, float* out,
                                                std::int64_t os, float* scratch) {
  const float* factors = level->factors.data();
  if constexpr (N == 2) {
    // Length-1 inverses are the identity: a = in row 0, b = in row 1.
    const float f = factors[0];
    const float* a = row(in, is, 0);
    const float* b = row(in, is, 1);
    float* x0 = row(out, os, 0);
    float* x1 = row(out, os, 1);
#pragma omp simd
    for (std::int64_t j = 0; j < lanes; ++j) {
      x0[j] = a[j] + f * b[j];
      x1[j] = a[j] - f * b[j];
    }
  } else {
    const std::int64_t n = N > 0 ? N : level->n;
    const std::int64_t m = n / 2;
    [[maybe_unused]] alignas(64) float local[N > 0 ? 3 * (N / 2) * lanes : 1];  // see forward_step
    float* a = N > 0 ? local : scratch;
    float* sums = a + m * lanes;
    float* b = a + 2 * m * lanes;
    float* next_scratch = N > 0 ? scratch : scratch + 3 * m * lanes;
    std::copy_n(row(in, is, 1), lanes, sums);
    for (std::int64_t k = 1; k < m; ++k) {
      const float* odd = row(in, is, 2 * k + 1);
      const float* previous = row(in, is, 2 * k - 1);
      float* bk = row(sums, lanes, k);
#pragma omp simd
      for (std::int64_t j = 0; j < lanes; ++j) bk[j] = odd[j] + previous[j];
    }
    const Level* next = level + 1;
    if constexpr (N > 0) {
      inverse_step<N / 2>(next, in, 2 * is, a, lanes, next_scratch);
      inverse_step<N / 2>(next, sums, lanes, b, lanes, next_scratch);
    } else {
      inverse_rows(next, in, 2 * is, a, lanes, next_scratch);
      inverse_rows(next, sums, lanes, b, lanes, next_scratch);
    }
    for (std::int64_t i = 0; i < m; ++i) {
      const float f = factors[i];
      const float* ai = row(a, lanes, i);
      const float* bi = row(b, lanes, i);
      float* x = row(out, os, i);
      float* mirror = row(out, os, n - 1 - i);
#pragma omp simd
      for (std::int64_t j = 0; j < lanes; ++j) {
        x[j] = ai[j] + f * bi[j];
        mirror[j] = ai[j] - f * bi[j];
      }
    }
  }
}

enum class Direction { Forward, Inverse };

template <Direction D, int N>
[[gnu::always_inline]] inline void step(const Level* level, const float* in, std::int64_t is, float* out,
                                        std::int64_t os, float* scratch) {
  if constexpr (D == Direction::Forward) {
    forward_step<N>(level, in, is, out, os, scratch);
  } else {
    inverse_step<N>(level, in, is, out, os, scratch);
  }
}

// A level of either direction: the unrolled steps for the powers of two up to 32, the dense basis
// for an odd length, the generic step otherwise. Inlined into each direction's clone below.
template <Direction D>
[[gnu::always_inline]] inline void level_rows(const Level* level, const float* in, std::int64_t is, float* out,
                                              std::int64_t os, float* scratch) {
  switch (level->n) {
    case 1: std::copy_n(in, lanes, out); return;
    case 2: return step<D, 2>(level, in, is, out, os, scratch);
    case 4: return step<D, 4>(level, in, is, out, os, scratch);
    case 8: return step<D, 8>(level, in, is, out, os, scratch);
    case 16: return step<D, 16>(level, in, is, out, os, scratch);
    case 32: return step<D, 32>(level, in, is, out, os, scratch);
    default:
      if (level->n % 2 == 0) return step<D, 0>(level, in, is, out, os, scratch);
      if constexpr (D == Direction::Forward) {
        dense_forward(*level, in, is, out, os);
      } else {
        dense_inverse(*level, in, is, out, os);
      }
  }
}

LOWCOMM_SIMD_CLONES
void forward_rows(const Level* level, const float* in, std::int64_t is, float* out, std::int64_t os, float* scratch) {
  level_rows<Direction::Forward>(level, in, is, out, os, scratch);
}

LOWCOMM_SIMD_CLONES
void inverse_rows(const Level* level, const float* in, std::int64_t is, float* out, std::int64_t os, float* scratch) {
  level_rows<Direction::Inverse>(level, in, is, out, os, scratch);
}

// Level 0 of the forward transform over whole rows: a[i] = scale·(x[i] + x[n-1-i]) and b[i] =
// f[i]·(x[i] - x[n-1-i]) (f carries the scale), `lanes` floats of each, zeros to `padded`.
LOWCOMM_SIMD_CLONES
void forward_butterflies(std::int64_t n, float scale, const float* factors, const float* in, std::int64_t is,
                         std::int64_t width, std::int64_t padded, float* a, float* b) {
  for (std::int64_t i = 0; i < n / 2; ++i) {
    const float f = factors[i];
    const float* x = row(in, is, i);
    const float* mirror = row(in, is, n - 1 - i);
    float* ai = row(a, padded, i);
    float* bi = row(b, padded, i);
#pragma omp simd
    for (std::int64_t j = 0; j < width; ++j) {
      ai[j] = scale * (x[j] + mirror[j]);
      bi[j] = f * (x[j] - mirror[j]);
    }
    std::fill(ai + width, ai + padded, 0.0f);
    std::fill(bi + width, bi + padded, 0.0f);
  }
}

// Level 0 of the inverse over whole rows, from a and b (the half-length inverses, `padded` apart):
// with e = scale·(a[i] + weight·y0), x[i] = e + f[i]·b[i] and x[n-1-i] = e - f[i]·b[i], where y0
// is the input's row 0 and weight = 1/√2 - 1. The orthonormal row 0 is 1/√2 of the uniform
// scale, and basis row 0 is all ones, so that difference adds the same term to every output.
LOWCOMM_SIMD_CLONES
void inverse_butterflies(std::int64_t n, float scale, const float* factors, const float* a, const float* b,
                         std::int64_t padded, const float* first, float* out, std::int64_t os, std::int64_t width) {
  const float weight = static_cast<float>(1.0 / std::numbers::sqrt2 - 1.0);
  for (std::int64_t i = 0; i < n / 2; ++i) {
    const float f = factors[i];
    const float* ai = row(a, padded, i);
    const float* bi = row(b, padded, i);
    float* x = row(out, os, i);
    float* mirror = row(out, os, n - 1 - i);
#pragma omp simd
    for (std::int64_t j = 0; j < width; ++j) {
      const float even = scale * (ai[j] + weight * first[j]);
      x[j] = even + f * bi[j];
      mirror[j] = even - f * bi[j];
    }
  }
}

// One strip of the forward transform below level 0: X[2k] = A[k] straight into the even rows of
// y, B into the scratch, then X[2k+1] = B[k] + B[k+1]; row 0 (the mean) rescaled from √(2/n) to
// the orthonormal √(1/n).
LOWCOMM_SIMD_CLONES
void forward_strip(const Level* next, const float* a, const float* b, std::int64_t ab_stride, float* y,
                   std::int64_t ys, float* scratch) {
  const std::int64_t m = next->n;
  float* sums = scratch;
  forward_rows(next, a, ab_stride, y, 2 * ys, scratch + m * lanes);
  forward_rows(next, b, ab_stride, sums, lanes, scratch + m * lanes);
  for (std::int64_t k = 0; k + 1 < m; ++k) {
    float* odd = row(y, ys, 2 * k + 1);
#pragma omp simd
    for (std::int64_t j = 0; j < lanes; ++j) odd[j] = sums[k * lanes + j] + sums[(k + 1) * lanes + j];
  }
  std::copy_n(sums + (m - 1) * lanes, lanes, row(y, ys, 2 * m - 1));
  const float first_row_scale = static_cast<float>(1.0 / std::numbers::sqrt2);
#pragma omp simd
  for (std::int64_t j = 0; j < lanes; ++j) y[j] *= first_row_scale;
}

// One strip of the inverse below level 0: A[k] = y[2k] and B[0] = y[1], B[k] = y[2k+1] + y[2k-1]
// through the half-length inverses into a and b.
LOWCOMM_SIMD_CLONES
void inverse_strip(const Level* next, const float* y, std::int64_t ys, float* a, float* b, std::int64_t ab_stride,
                   float* scratch) {
  const std::int64_t m = next->n;
  float* sums = scratch;
  std::copy_n(row(y, ys, 1), lanes, sums);
  for (std::int64_t k = 1; k < m; ++k) {
    const float* odd = row(y, ys, 2 * k + 1);
    const float* previous = row(y, ys, 2 * k - 1);
#pragma omp simd
    for (std::int64_t j = 0; j < lanes; ++j) sums[k * lanes + j] = odd[j] + previous[j];
  }
  inverse_rows(next, y, 2 * ys, a, ab_stride, scratch + m * lanes);
  inverse_rows(next, sums, lanes, b, ab_stride, scratch + m * lanes);
}

}  // namespace

bool FastDct::handles(std::int64_t n) {
  return n == 1 || (n > 0 && n <= kMaxLength && n % 2 == 0 && odd_part(n) <= kMaxOddPart);
}

FastDct::FastDct(std::int64_t n) : n_(n), scale_(static_cast<float>(std::sqrt(2.0 / static_cast<double>(n)))) {
  if (!handles(n)) {
    throw Error(fmt::format("FastDct: length {} is not 1, or even with an odd part of at most {} and at most {}", n,
                            kMaxOddPart, kMaxLength));
  }
  for (std::int64_t length = n; length >= 1; length /= 2) {
    Level level;
    level.n = length;
    if (length % 2 == 1) {
      for (std::int64_t k = 0; k < length; ++k) {
        for (std::int64_t i = 0; i < length; ++i) {
          level.basis.push_back(static_cast<float>(
              std::cos(std::numbers::pi * static_cast<double>((2 * i + 1) * k) / (2.0 * static_cast<double>(length)))));
        }
      }
      levels_.push_back(std::move(level));
      break;
    }
    for (std::int64_t i = 0; i < length / 2; ++i) {
      const double factor =
          1.0 / (2.0 * std::cos(std::numbers::pi * static_cast<double>(2 * i + 1) / (2.0 * static_cast<double>(length))));
      level.factors.push_back(static_cast<float>(factor));
      if (length == n) top_factors_.push_back(static_cast<float>(std::sqrt(2.0 / static_cast<double>(n)) * factor));
    }
    levels_.push_back(std::move(level));
  }
}

void FastDct::forward(const float* in, std::int64_t in_stride, float* out, std::int64_t out_stride, std::int64_t width,
                      float* scratch) const {
  if (n_ == 1) {
    std::copy_n(in, width, out);
    return;
  }
  const std::int64_t p = padded(width);
  float* a = scratch;
  float* b = scratch + n_ / 2 * p;
  forward_butterflies(n_, scale_, top_factors_.data(), in, in_stride, width, p, a, b);
  for (std::int64_t start = 0; start < p; start += kStrip) {
    forward_strip(&levels_[1], a + start, b + start, p, out + start, out_stride, scratch + n_ * p);
  }
}

void FastDct::inverse(const float* in, std::int64_t in_stride, float* out, std::int64_t out_stride, std::int64_t width,
                      float* scratch) const {
  if (n_ == 1) {
    std::copy_n(in, width, out);
    return;
  }
  const std::int64_t p = padded(width);
  float* a = scratch;
  float* b = scratch + n_ / 2 * p;
  for (std::int64_t start = 0; start < p; start += kStrip) {
    inverse_strip(&levels_[1], in + start, in_stride, a + start, b + start, p, scratch + n_ * p);
  }
  inverse_butterflies(n_, scale_, top_factors_.data(), a, b, p, in, out, out_stride, width);
}

}  // namespace lowcomm::kernels::cpu_backend
