#include "thin_gemm.hpp"

#include <omp.h>

#include <algorithm>
#include <vector>

#include "../elementwise_rules.hpp"
#include "lowcomm/core/simd_clones.hpp"

namespace lowcomm::kernels::detail {

namespace {

// Rows (FewColumns, FewInner) or columns (FewColumnsTransposed) below which one thread does it all.
constexpr std::int64_t kParallelRows = 64;

// The BLAS's definition of the update of one entry (beta == 0 does not read C).
inline float combine(float alpha, float sum, float beta, float old) {
  return beta == 0.0f ? alpha * sum : alpha * sum + beta * old;
}

// Row `row` (k floats) of A times B, B given transposed (bt: n × k), into out (n floats): each
// entry a dot product of two contiguous rows, in 16 partial sums, lane l taking p ≡ l (mod 16): a
// fixed order that the compiler maps onto any vector width.
[[gnu::always_inline]] inline void few_columns_row(std::int64_t n, std::int64_t k, float alpha, const float* row,
                                                   const float* bt, float beta, float* out) {
  constexpr std::int64_t kLanes = 16;
  const std::int64_t whole = k / kLanes * kLanes;
  float lanes[kThinLimit][kLanes] = {};
  for (std::int64_t p = 0; p < whole; p += kLanes) {
    for (std::int64_t j = 0; j < n; ++j) {
      const float* col = bt + j * k + p;
      for (std::int64_t l = 0; l < kLanes; ++l) lanes[j][l] += row[p + l] * col[l];
    }
  }
  for (std::int64_t j = 0; j < n; ++j) {
    float sum = 0.0f;
    for (std::int64_t l = 0; l < kLanes; ++l) sum += lanes[j][l];
    for (std::int64_t p = whole; p < k; ++p) sum += row[p] * bt[j * k + p];
    out[j] = combine(alpha, sum, beta, out[j]);
  }
}

// C[i][:] for the rows [begin, end) of C = A·B, B given transposed (bt: n × k).
LOWCOMM_SIMD_CLONES
void few_columns_rows(std::int64_t begin, std::int64_t end, std::int64_t n, std::int64_t k, float alpha,
                      const float* a, const float* bt, float beta, float* c) {
  for (std::int64_t i = begin; i < end; ++i) few_columns_row(n, k, alpha, a + i * k, bt, beta, c + i * n);
}

// Columns [begin, end) of C = Aᵀ·B (A stored k × m, B k × n): ct[j][col] accumulates over the
// rows of A in index order, one axpy per row and output column.
LOWCOMM_SIMD_CLONES
void few_columns_transposed_slice(std::int64_t begin, std::int64_t end, std::int64_t m, std::int64_t n,
                                  std::int64_t k, const float* a, const float* b, float* ct) {
  const std::int64_t width = end - begin;
  std::fill(ct, ct + n * width, 0.0f);
  for (std::int64_t p = 0; p < k; ++p) {
    const float* row = a + p * m + begin;
    for (std::int64_t j = 0; j < n; ++j) {
      const float factor = b[p * n + j];
      float* out = ct + j * width;
      for (std::int64_t col = 0; col < width; ++col) out[col] += row[col] * factor;
    }
  }
}

// Σ_p factors[p]·bt[p][:] into sum (n floats), bt: k × n (B transposed back): each entry
// 0 + a0·b0 + a1·b1 + ... in index order, one term at a time across the whole row, so that the
// loops run along C's contiguous rows.
[[gnu::always_inline]] inline void few_inner_row(std::int64_t n, std::int64_t k, const float* factors,
                                                 const float* bt, float* sum) {
  std::fill(sum, sum + n, 0.0f);
  for (std::int64_t p = 0; p < k; ++p) {
    const float factor = factors[p];
    const float* row = bt + p * n;
    for (std::int64_t j = 0; j < n; ++j) sum[j] += factor * row[j];
  }
}

// Rows [begin, end) of C = A·Bᵀ with k ≤ kThinLimit, built in a row buffer (`sum`, n floats).
LOWCOMM_SIMD_CLONES
void few_inner_rows(std::int64_t begin, std::int64_t end, std::int64_t n, std::int64_t k, float alpha,
                    const float* a, const float* bt, float beta, float* c, float* sum) {
  for (std::int64_t i = begin; i < end; ++i) {
    few_inner_row(n, k, a + i * k, bt, sum);
    float* out = c + i * n;
    if (beta == 0.0f) {
      for (std::int64_t j = 0; j < n; ++j) out[j] = alpha * sum[j];
    } else {
      for (std::int64_t j = 0; j < n; ++j) out[j] = alpha * sum[j] + beta * out[j];
    }
  }
}

// Rows [begin, end) of feedback_product (linalg.hpp): each row's reconstruction last_p[i]·last_qᵀ
// as few_inner_rows builds it (alpha 1: the sum itself), the corrected row with elementwise.hpp's
// rules, then that row, still in cache, times Q as few_columns_rows multiplies it.
LOWCOMM_SIMD_CLONES
void feedback_product_rows(std::int64_t begin, std::int64_t end, std::int64_t cols, std::int64_t last_rank,
                           const float* last_p, const float* last_qt, float decay, const float* gradient,
                           float* corrected, std::int64_t rank, const float* qt, float* p, float* transmitted) {
  for (std::int64_t i = begin; i < end; ++i) {
    few_inner_row(cols, last_rank, last_p + i * last_rank, last_qt, transmitted);
    float* row = corrected + i * cols;
    const float* g = gradient + i * cols;
    for (std::int64_t j = 0; j < cols; ++j) row[j] = scaled_sum(decay, difference(row[j], transmitted[j]), g[j]);
    few_columns_row(rank, cols, 1.0f, row, qt, 0.0f, p + i * rank);
  }
}

// m × n row-major → n × m.
std::vector<float> transposed(std::int64_t m, std::int64_t n, const float* matrix) {
  std::vector<float> out(static_cast<std::size_t>(m * n));
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < n; ++j) out[j * m + i] = matrix[i * n + j];
  }
  return out;
}

// Cuts [0, count) into one contiguous piece per thread, of whole multiples of `align` but the last.
template <class Body>
void split_between_threads(std::int64_t count, std::int64_t align, const Body& body) {
#pragma omp parallel if (count >= kParallelRows)
  {
    const std::int64_t threads = omp_get_num_threads();
    const std::int64_t me = omp_get_thread_num();
    const std::int64_t per = (count / threads + align - 1) / align * align;
    const std::int64_t begin = std::min(count, me * per);
    const std::int64_t end = me + 1 == threads ? count : std::min(count, begin + per);
    if (begin < end) body(begin, end);
  }
}

}  // namespace

ThinShape thin_shape(bool transpose_a, bool transpose_b, std::int64_t, std::int64_t n, std::int64_t k) {
  if (!transpose_a && !transpose_b && n <= kThinLimit) return ThinShape::FewColumns;
  if (transpose_a && !transpose_b && n <= kThinLimit) return ThinShape::FewColumnsTransposed;
  if (!transpose_a && transpose_b && k <= kThinLimit) return ThinShape::FewInner;
  return ThinShape::None;
}

void thin_product(ThinShape shape, std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* a,
                  const float* b, float beta, float* c) {
  if (m == 0 || n == 0) return;
  switch (shape) {
    case ThinShape::FewColumns: {
      const std::vector<float> bt = transposed(k, n, b);
      split_between_threads(m, 1, [&](std::int64_t begin, std::int64_t end) {
        few_columns_rows(begin, end, n, k, alpha, a, bt.data(), beta, c);
      });
      return;
    }
    case ThinShape::FewColumnsTransposed:
      // Threads take slices of C's rows (A's columns), 16 at a time; each reads its slice of
      // every row of A.
      split_between_threads(m, 16, [&](std::int64_t begin, std::int64_t end) {
        std::vector<float> ct(static_cast<std::size_t>(n * (end - begin)));
        few_columns_transposed_slice(begin, end, m, n, k, a, b, ct.data());
        for (std::int64_t col = begin; col < end; ++col) {
          for (std::int64_t j = 0; j < n; ++j) {
            c[col * n + j] = combine(alpha, ct[j * (end - begin) + (col - begin)], beta, c[col * n + j]);
          }
        }
      });
      return;
    case ThinShape::FewInner: {
      const std::vector<float> bt = transposed(n, k, b);
      split_between_threads(m, 1, [&](std::int64_t begin, std::int64_t end) {
        std::vector<float> sum(static_cast<std::size_t>(n));
        few_inner_rows(begin, end, n, k, alpha, a, bt.data(), beta, c, sum.data());
      });
      return;
    }
    case ThinShape::None: break;
  }
}

void feedback_product(std::int64_t rows, std::int64_t cols, std::int64_t last_rank, const float* last_p,
                      const float* last_q, float decay, const float* gradient, float* corrected, std::int64_t rank,
                      const float* q, float* p) {
  if (rows == 0) return;
  const std::vector<float> last_qt = transposed(cols, last_rank, last_q);
  const std::vector<float> qt = transposed(cols, rank, q);
  // As few_columns_rows's product is split (by rows, any split): the same bits at every thread count.
  split_between_threads(rows, 1, [&](std::int64_t begin, std::int64_t end) {
    std::vector<float> transmitted(static_cast<std::size_t>(cols));
    feedback_product_rows(begin, end, cols, last_rank, last_p, last_qt.data(), decay, gradient, corrected, rank,
                          qt.data(), p, transmitted.data());
  });
}

}  // namespace lowcomm::kernels::detail
