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

void check_feedback_product(std::int64_t rows, std::int64_t cols, std::int64_t last_rank,
                            std::span<const float> last_p, std::span<const float> last_q,
                            std::span<const float> gradient, std::span<float> corrected, std::int64_t rank,
                            std::span<const float> q, std::span<float> p) {
  if (rows < 0 || cols < 0) {
    throw Error(fmt::format("feedback_product: dimensions must be ≥ 0, got {} × {}", rows, cols));
  }
  for (const std::int64_t r : {last_rank, rank}) {
    if (r < 1 || r > kFeedbackProductMaxRank) {
      throw Error(fmt::format("feedback_product: ranks must be 1 to {}, got {}", kFeedbackProductMaxRank, r));
    }
  }
  auto check = [](std::string_view name, std::size_t size, std::int64_t r, std::int64_t c) {
    if (c != 0 && r > std::numeric_limits<std::int64_t>::max() / c) {
      throw Error(fmt::format("feedback_product: {} of {} × {} overflows", name, r, c));
    }
    if (size != static_cast<std::uint64_t>(r * c)) {
      throw Error(fmt::format("feedback_product: {} holds {} floats, {} × {} needs {}", name, size, r, c, r * c));
    }
  };
  check("last_p", last_p.size(), rows, last_rank);
  check("last_q", last_q.size(), cols, last_rank);
  check("gradient", gradient.size(), rows, cols);
  check("corrected", corrected.size(), rows, cols);
  check("q", q.size(), cols, rank);
  check("p", p.size(), rows, rank);
  // The outputs are written while the inputs are read: none may share memory with another span.
  using detail::apart;
  for (const std::span<const float> out : {std::span<const float>(corrected), std::span<const float>(p)}) {
    for (const std::span<const float> in : {last_p, last_q, gradient, q}) {
      if (!apart(in, out)) throw Error("feedback_product: an output shares memory with an input");
    }
  }
  if (!apart(corrected, p)) throw Error("feedback_product: corrected and p share memory");
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

void feedback_product(Backend backend, std::int64_t rows, std::int64_t cols, std::int64_t last_rank,
                      std::span<const float> last_p, std::span<const float> last_q, float decay,
                      std::span<const float> gradient, std::span<float> corrected, std::int64_t rank,
                      std::span<const float> q, std::span<float> p) {
  check_feedback_product(rows, cols, last_rank, last_p, last_q, gradient, corrected, rank, q, p);
  LOWCOMM_DISPATCH(backend, feedback_product, rows, cols, last_rank, last_p, last_q, decay, gradient, corrected,
                   rank, q, p);
}

}  // namespace lowcomm::kernels
