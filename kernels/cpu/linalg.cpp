// linalg.hpp on the Cpu backend.
//
// Gram-Schmidt: columns are strided in a row-major matrix, so where the Reference walks each
// column down the rows, Cpu walks rows: for column i it normalises p_i and accumulates
// ⟨p_i, p_j⟩ for every j > i in one pass (contiguous, vectorisable across j), then subtracts the
// projections and accumulates ‖p_{i+1}‖² in a second pass. Rows are cut into fixed blocks summed
// separately and then in block order, so threads can share the work while the result stays
// independent of the thread count.
//
// GEMM: the one BLAS product of the CPU kernels (blas.hpp: OpenBLAS, else Eigen), except for
// products with a thin operand, which stream the big one once (thin_gemm.hpp).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "../backend_kernels.hpp"
#include "blas.hpp"
#include "thin_gemm.hpp"

namespace lowcomm::kernels::cpu_backend {
namespace {

// Rows per partial sum: long enough to amortise a thread's start, short enough that a P of a few
// thousand rows still spreads over the cores.
constexpr std::int64_t kBlockRows = 256;
constexpr std::int64_t kParallelMin = std::int64_t{1} << 16;

}  // namespace

void orthonormalize_columns(std::span<float> matrix, std::int64_t rows, std::int64_t cols, float epsilon) {
  if (rows == 0 || cols == 0) return;
  float* data = matrix.data();
  const std::int64_t blocks = (rows + kBlockRows - 1) / kBlockRows;
  // partial[block · cols + j]: the block's share of ⟨p_i, p_j⟩ for j > i, and in the slot of
  // column i + 1, after the update, its share of ‖p_{i+1}‖².
  std::vector<float> partial(static_cast<std::size_t>(blocks * cols));
  std::vector<float> sums(static_cast<std::size_t>(cols));
  float* part = partial.data();
  float* sum = sums.data();
  auto reduce = [&](std::int64_t first, std::int64_t last) {
    for (std::int64_t j = first; j < last; ++j) {
      float total = 0.0f;
      for (std::int64_t block = 0; block < blocks; ++block) total += part[block * cols + j];
      sum[j] = total;
    }
  };
  // Each column costs two parallel regions; below this many elements their start-up dominates.
  const bool parallel = rows * cols >= kParallelMin;

#pragma omp parallel for schedule(static) if (parallel)
  for (std::int64_t block = 0; block < blocks; ++block) {
    float squares = 0.0f;
    const std::int64_t end = std::min(rows, (block + 1) * kBlockRows);
    for (std::int64_t r = block * kBlockRows; r < end; ++r) {
      squares += data[r * cols] * data[r * cols];
    }
    part[block * cols] = squares;
  }
  reduce(0, 1);

  for (std::int64_t i = 0; i < cols; ++i) {
    const float divisor = std::sqrt(sum[i]) + epsilon;
#pragma omp parallel for schedule(static) if (parallel)
    for (std::int64_t block = 0; block < blocks; ++block) {
      float* acc = part + block * cols;
      std::fill(acc + i + 1, acc + cols, 0.0f);
      const std::int64_t end = std::min(rows, (block + 1) * kBlockRows);
      for (std::int64_t r = block * kBlockRows; r < end; ++r) {
        float* row = data + r * cols;
        row[i] /= divisor;
        const float pi = row[i];
        for (std::int64_t j = i + 1; j < cols; ++j) acc[j] += pi * row[j];
      }
    }
    if (i + 1 == cols) break;
    reduce(i + 1, cols);

    const std::int64_t next = i + 1;
#pragma omp parallel for schedule(static) if (parallel)
    for (std::int64_t block = 0; block < blocks; ++block) {
      float squares = 0.0f;
      const std::int64_t end = std::min(rows, (block + 1) * kBlockRows);
      for (std::int64_t r = block * kBlockRows; r < end; ++r) {
        float* row = data + r * cols;
        const float pi = row[i];
        for (std::int64_t j = next; j < cols; ++j) row[j] -= sum[j] * pi;
        squares += row[next] * row[next];
      }
      part[block * cols + next] = squares;
    }
    reduce(next, next + 1);
  }
}

const char* gemm_provider() { return detail::sgemm_provider(); }

void gemm(bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
          std::span<const float> a, std::span<const float> b, float beta, std::span<float> c) {
  if (const auto thin = detail::thin_shape(transpose_a, transpose_b, m, n, k); thin != detail::ThinShape::None) {
    return detail::thin_product(thin, m, n, k, alpha, a.data(), b.data(), beta, c.data());
  }
  detail::sgemm(transpose_a, transpose_b, m, n, k, alpha, a.data(), b.data(), beta, c.data());
}

void feedback_product(std::int64_t rows, std::int64_t cols, std::int64_t last_rank, std::span<const float> last_p,
                      std::span<const float> last_q, float decay, std::span<const float> gradient,
                      std::span<float> corrected, std::int64_t rank, std::span<const float> q, std::span<float> p) {
  detail::feedback_product(rows, cols, last_rank, last_p.data(), last_q.data(), decay, gradient.data(),
                           corrected.data(), rank, q.data(), p.data());
}

}  // namespace lowcomm::kernels::cpu_backend
