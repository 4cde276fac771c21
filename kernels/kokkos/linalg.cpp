// PowerSGD's linear algebra (linalg.hpp): the row-major GEMM and modified Gram-Schmidt.
// Gram-Schmidt takes each sum in the Reference's order in one work item. The GEMM is
// KokkosBlas::gemm where Kokkos-Kernels was found (the BLAS, cuBLAS or rocBLAS the site built it
// with), else a plain parallel loop over C's entries in the Reference's order; either matches the
// Reference within float rounding.
#include <Kokkos_Core.hpp>
#if LOWCOMM_HAVE_KOKKOS_KERNELS
#include <KokkosBlas3_gemm.hpp>
#endif

#include <cmath>

#include "kokkos_views.hpp"

namespace lowcomm::kernels::kokkos_backend {

const char* gemm_provider() {
#if LOWCOMM_HAVE_KOKKOS_KERNELS
  return "KokkosBlas::gemm";
#else
  return "Kokkos loops";
#endif
}

void gemm(bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
          std::span<const float> a, std::span<const float> b, float beta, std::span<float> c) {
  const auto av = input(a);
  const auto bv = input(b);
  Output<float> result(c, /*initialised=*/beta != 0.0f);
  const auto cv = result.view();
#if LOWCOMM_HAVE_KOKKOS_KERNELS
  // Row-major matrices as LayoutRight views over the same memory. As in BLAS, beta == 0 must not
  // read C: it is zeroed first, so NaNs there cannot propagate. (k == 0 takes the loop below:
  // Kokkos-Kernels 3.4 then leaves C unscaled.)
  if (k > 0) {
    using Matrix = Kokkos::View<float**, Kokkos::LayoutRight, MemorySpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
    using ConstMatrix =
        Kokkos::View<const float**, Kokkos::LayoutRight, MemorySpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
    if (beta == 0.0f) Kokkos::deep_copy(cv, 0.0f);
    const ConstMatrix am(av.data(), transpose_a ? k : m, transpose_a ? m : k);
    const ConstMatrix bm(bv.data(), transpose_b ? n : k, transpose_b ? k : n);
    const Matrix cm(cv.data(), m, n);
    KokkosBlas::gemm(transpose_a ? "T" : "N", transpose_b ? "T" : "N", alpha, am, bm, beta, cm);
    result.finish();
    return;
  }
#endif
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
