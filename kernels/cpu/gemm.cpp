// Row-major GEMM (include/lowcomm/kernels/linalg.hpp): Reference is the triple loop that defines
// the result; Cpu is the one BLAS product of the CPU kernels (blas.hpp: OpenBLAS, else Eigen),
// except for products with a thin operand, which stream the big one once (thin_gemm.hpp).
#include <cstdint>
#include <limits>
#include <string_view>

#include <fmt/format.h>

#include "lowcomm/error.hpp"
#if LOWCOMM_HAVE_KOKKOS
#include "../kokkos/kokkos_backend.hpp"
#endif
#if LOWCOMM_HAVE_CUDA
#include "../cuda/cuda_backend.hpp"
#endif
#include "blas.hpp"
#include "lowcomm/kernels/linalg.hpp"
#include "thin_gemm.hpp"

namespace lowcomm::kernels {
namespace {

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

void check_arguments(bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n,
                     std::int64_t k, std::span<const float> a, std::span<const float> b,
                     std::span<float> c) {
  if (m < 0 || n < 0 || k < 0) {
    throw Error(fmt::format("gemm: dimensions must be ≥ 0, got m = {}, n = {}, k = {}", m, n, k));
  }
  check_size(transpose_a ? "A (stored k × m)" : "A (m × k)", a.size(), transpose_a ? k : m,
             transpose_a ? m : k);
  check_size(transpose_b ? "B (stored n × k)" : "B (k × n)", b.size(), transpose_b ? n : k,
             transpose_b ? k : n);
  check_size("C (m × n)", c.size(), m, n);
}

void gemm_reference(bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n,
                    std::int64_t k, float alpha, std::span<const float> a,
                    std::span<const float> b, float beta, std::span<float> c) {
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

}  // namespace

void gemm(Backend backend, bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n,
          std::int64_t k, float alpha, std::span<const float> a, std::span<const float> b,
          float beta, std::span<float> c) {
  check_arguments(transpose_a, transpose_b, m, n, k, a, b, c);
  switch (backend) {
    case Backend::Reference:
      return gemm_reference(transpose_a, transpose_b, m, n, k, alpha, a, b, beta, c);
    case Backend::Cpu:
      if (const auto thin = detail::thin_shape(transpose_a, transpose_b, m, n, k); thin != detail::ThinShape::None) {
        return detail::thin_product(thin, m, n, k, alpha, a.data(), b.data(), beta, c.data());
      }
      return detail::sgemm(transpose_a, transpose_b, m, n, k, alpha, a.data(), b.data(), beta, c.data());
    case Backend::Kokkos:
#if LOWCOMM_HAVE_KOKKOS
      return kokkos_backend::gemm(transpose_a, transpose_b, m, n, k, alpha, a, b, beta, c);
#endif
      break;
    case Backend::Cuda:
#if LOWCOMM_HAVE_CUDA
      return cuda_backend::gemm(transpose_a, transpose_b, m, n, k, alpha, a, b, beta, c);
#endif
      break;
  }
  unsupported("gemm", backend);
}

}  // namespace lowcomm::kernels
