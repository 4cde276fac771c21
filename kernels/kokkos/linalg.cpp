// PowerSGD's linear algebra (linalg.hpp): the row-major GEMM and modified Gram-Schmidt, each
// output's sum taken in the Reference's order by one work item, so that the results are the
// Reference's bit for bit where the compiler does not contract multiply-adds. Products run as
// plain parallel loops over C's entries, not through Kokkos-Kernels (see docs/backends.md).
#include <Kokkos_Core.hpp>

#include <cmath>

#include "kokkos_views.hpp"

namespace lowcomm::kernels::kokkos_backend {

void gemm(bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
          std::span<const float> a, std::span<const float> b, float beta, std::span<float> c) {
  const auto av = input(a);
  const auto bv = input(b);
  Output<float> result(c, /*initialised=*/beta != 0.0f);
  const auto cv = result.view();
  Kokkos::parallel_for("lowcomm::gemm", Range(0, m * n), KOKKOS_LAMBDA(const std::int64_t e) {
    const std::int64_t i = e / n, j = e % n;
    float sum = 0.0f;
    for (std::int64_t p = 0; p < k; ++p) {
      sum += (transpose_a ? av(p * m + i) : av(i * k + p)) * (transpose_b ? bv(j * k + p) : bv(p * n + j));
    }
    cv(e) = beta == 0.0f ? alpha * sum : alpha * sum + beta * cv(e);
  });
  result.finish();
}

// Column after column: its norm, its normalisation, then every later column's projection on it
// (the dot products are independent of each other, so they run side by side, then the updates).
void orthonormalize_columns(std::span<float> matrix, std::int64_t rows, std::int64_t cols, float epsilon) {
  if (rows == 0 || cols == 0) return;
  Output<float> result(matrix, /*initialised=*/true);
  const auto p = result.view();
  DeviceView<float> dots("lowcomm::orthonormalize::dots", static_cast<std::size_t>(cols));
  for (std::int64_t i = 0; i < cols; ++i) {
    Kokkos::parallel_for("lowcomm::orthonormalize::norm", Range(0, 1), KOKKOS_LAMBDA(const std::int64_t) {
      float squares = 0.0f;
      for (std::int64_t r = 0; r < rows; ++r) squares += p(r * cols + i) * p(r * cols + i);
      dots(i) = std::sqrt(squares) + epsilon;
    });
    Kokkos::parallel_for("lowcomm::orthonormalize::scale", Range(0, rows), KOKKOS_LAMBDA(const std::int64_t r) {
      p(r * cols + i) /= dots(i);
    });
    if (i + 1 == cols) break;
    Kokkos::parallel_for("lowcomm::orthonormalize::dots", Range(i + 1, cols), KOKKOS_LAMBDA(const std::int64_t j) {
      float dot = 0.0f;
      for (std::int64_t r = 0; r < rows; ++r) dot += p(r * cols + i) * p(r * cols + j);
      dots(j) = dot;
    });
    const std::int64_t later = cols - i - 1;
    Kokkos::parallel_for("lowcomm::orthonormalize::project", Range(0, rows * later), KOKKOS_LAMBDA(const std::int64_t e) {
      const std::int64_t r = e / later, j = i + 1 + e % later;
      p(r * cols + j) -= dots(j) * p(r * cols + i);
    });
  }
  result.finish();
}

}  // namespace lowcomm::kernels::kokkos_backend
