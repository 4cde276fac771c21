// linalg.hpp's definitions: Gram-Schmidt walking each column down the rows, as the paper's code
// reads, and the triple loop that defines the GEMM's result.
#include <cmath>

#include "../backend_kernels.hpp"

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

}  // namespace lowcomm::kernels::reference_backend
