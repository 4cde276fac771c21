#include "lowcomm/kernels/linalg.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string_view>

#include <fmt/format.h>

#include "dispatch.hpp"
#include "lowcomm/error.hpp"

namespace lowcomm::kernels {
namespace {

void check_orthonormalize(std::span<float> matrix, std::int64_t rows, std::int64_t cols,
                          float epsilon) {
  if (rows < 0 || cols < 0) {
    throw Error(fmt::format("orthonormalize_columns: dimensions must be ≥ 0, got {} × {}", rows,
                            cols));
  }
  if (cols != 0 && rows > std::numeric_limits<std::int64_t>::max() / cols) {
    throw Error(fmt::format("orthonormalize_columns: {} × {} overflows", rows, cols));
  }
  if (matrix.size() != static_cast<std::uint64_t>(rows * cols)) {
    throw Error(fmt::format("orthonormalize_columns: matrix holds {} floats, {} × {} needs {}",
                            matrix.size(), rows, cols, rows * cols));
  }
  if (!(epsilon > 0.0f) || !std::isfinite(epsilon)) {
    throw Error(fmt::format("orthonormalize_columns: epsilon must be finite and > 0, got {}",
                            epsilon));
  }
}

// Checks that rows · cols neither overflows nor differs from the span's size.
void check_size(std::string_view name, std::size_t size, std::int64_t rows, std::int64_t cols) {
  if (cols != 0 && rows > std::numeric_limits<std::int64_t>::max() / cols) {
    throw Error(fmt::format("gemm: {} of {} × {} overflows", name, rows, cols));
  }
  if (size != static_cast<std::uint64_t>(rows * cols)) {
    throw Error(fmt::format("gemm: {} holds {} floats, {} × {} needs {}", name, size, rows, cols,
                            rows * cols));
  }
}

void check_gemm(bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n, std::int64_t k,
                std::span<const float> a, std::span<const float> b, std::span<float> c) {
  if (m < 0 || n < 0 || k < 0) {
    throw Error(fmt::format("gemm: dimensions must be ≥ 0, got m = {}, n = {}, k = {}", m, n, k));
  }
  check_size(transpose_a ? "A (stored k × m)" : "A (m × k)", a.size(), transpose_a ? k : m,
             transpose_a ? m : k);
  check_size(transpose_b ? "B (stored n × k)" : "B (k × n)", b.size(), transpose_b ? n : k,
             transpose_b ? k : n);
  check_size("C (m × n)", c.size(), m, n);
}

}  // namespace

void orthonormalize_columns(Backend backend, std::span<float> matrix, std::int64_t rows,
                            std::int64_t cols, float epsilon) {
  check_orthonormalize(matrix, rows, cols, epsilon);
  LOWCOMM_DISPATCH(backend, orthonormalize_columns, matrix, rows, cols, epsilon);
}

void gemm(Backend backend, bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n,
          std::int64_t k, float alpha, std::span<const float> a, std::span<const float> b,
          float beta, std::span<float> c) {
  check_gemm(transpose_a, transpose_b, m, n, k, a, b, c);
  LOWCOMM_DISPATCH(backend, gemm, transpose_a, transpose_b, m, n, k, alpha, a, b, beta, c);
}

}  // namespace lowcomm::kernels
