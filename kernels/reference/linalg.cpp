// linalg.hpp's definitions: Gram-Schmidt walking each column down the rows, as the paper's code
// reads, the triple loop that defines the GEMM's result, and the fused feedback product as the
// unfused sequence it stands for.
#include <cmath>
#include <vector>

#include "../backend_kernels.hpp"
#include "../elementwise_rules.hpp"

namespace lowcomm::kernels::reference_backend {

void orthonormalize_columns(std::span<float> matrix, std::int64_t rows, std::int64_t cols, float epsilon) {
  auto p = [&](std::int64_t r, std::int64_t c) -> float& { return matrix[r * cols + c]; };
  for (std::int64_t i = 0; i < cols; ++i) {
    float squares = 0.0f;
    for (std::int64_t r = 0; r < rows; ++r) squares += p(r, i) * p(r, i);
    const float divisor = std::sqrt(squares) + epsilon;
    for (std::int64_t r = 0; r < rows; ++r) p(r, i) /= divisor;
    for (std::int64_t j = i + 1; j < cols; ++j) {
      float dot = 0.0f;
      for (std::int64_t r = 0; r < rows; ++r) dot += p(r, i) * p(r, j);
      for (std::int64_t r = 0; r < rows; ++r) p(r, j) -= dot * p(r, i);
    }
  }
}

const char* gemm_provider() { return "plain loops (the triple loop, sums over k in index order)"; }

void gemm(bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
          std::span<const float> a, std::span<const float> b, float beta, std::span<float> c) {
  auto op_a = [&](std::int64_t i, std::int64_t p) {
    return transpose_a ? a[p * m + i] : a[i * k + p];
  };
  auto op_b = [&](std::int64_t p, std::int64_t j) {
    return transpose_b ? b[j * k + p] : b[p * n + j];
  };
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      float sum = 0.0f;
      for (std::int64_t p = 0; p < k; ++p) sum += op_a(i, p) * op_b(p, j);
      float& out = c[i * n + j];
      out = beta == 0.0f ? alpha * sum : alpha * sum + beta * out;
    }
  }
}

void feedback_product(std::int64_t rows, std::int64_t cols, std::int64_t last_rank, std::span<const float> last_p,
                      std::span<const float> last_q, float decay, std::span<const float> gradient,
                      std::span<float> corrected, std::int64_t rank, std::span<const float> q, std::span<float> p) {
  std::vector<float> transmitted(corrected.size());
  gemm(false, true, rows, cols, last_rank, 1.0f, last_p, last_q, 0.0f, transmitted);
  for (std::size_t i = 0; i < corrected.size(); ++i) {
    corrected[i] = scaled_sum(decay, difference(corrected[i], transmitted[i]), gradient[i]);
  }
  gemm(false, false, rows, rank, cols, 1.0f, corrected, q, 0.0f, p);
}

}  // namespace lowcomm::kernels::reference_backend
