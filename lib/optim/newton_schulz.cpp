#include "lowcomm/optim/newton_schulz.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "lowcomm/error.hpp"
#include "lowcomm/kernels/elementwise.hpp"
#include "lowcomm/kernels/linalg.hpp"

namespace lowcomm {

std::size_t newton_schulz_scratch_size(std::int64_t rows, std::int64_t cols) {
  const auto side = static_cast<std::size_t>(std::min(rows, cols));
  return 2 * static_cast<std::size_t>(rows * cols) + 2 * side * side;
}

void orthogonalize_newton_schulz(kernels::Backend backend, std::span<float> matrix, std::int64_t rows,
                                 std::int64_t cols, int steps, std::span<float> scratch,
                                 NewtonSchulzCoefficients coefficients) {
  if (rows <= 0 || cols <= 0 || steps < 0) {
    throw Error(fmt::format("orthogonalize_newton_schulz: a {} x {} matrix, {} steps", rows, cols, steps));
  }
  const auto size = static_cast<std::size_t>(rows * cols);
  if (matrix.size() != size || scratch.size() != newton_schulz_scratch_size(rows, cols)) {
    throw Error(fmt::format("orthogonalize_newton_schulz: a {} x {} matrix needs {} values and {} of scratch, "
                            "got {} and {}", rows, cols, size, newton_schulz_scratch_size(rows, cols),
                            matrix.size(), scratch.size()));
  }
  double squares = 0;
  for (const float x : matrix) squares += double{x} * x;
  const float norm = static_cast<float>(std::sqrt(squares));
  const std::int64_t side = std::min(rows, cols);
  const bool tall = rows > cols;
  std::span<float> x = scratch.first(size);
  std::span<float> next = scratch.subspan(size, size);
  const std::span<float> a = scratch.subspan(2 * size, static_cast<std::size_t>(side * side));
  const std::span<float> b = scratch.subspan(2 * size + a.size(), a.size());
  kernels::scale(backend, 1.0f / (norm + 1e-7f), matrix, x);
  for (int step = 0; step < steps; ++step) {
    // A = X·Xᵀ (wide) or Xᵀ·X (tall): side × side.
    kernels::gemm(backend, tall, !tall, side, side, tall ? rows : cols, 1.0f, x, x, 0.0f, a);
    // B = b·A + c·A·A.
    kernels::scale(backend, coefficients.b, a, b);
    kernels::gemm(backend, false, false, side, side, side, coefficients.c, a, a, 1.0f, b);
    // X ← a·X + B·X (wide) or a·X + X·B (tall; B is symmetric).
    kernels::scale(backend, coefficients.a, x, next);
    if (tall) {
      kernels::gemm(backend, false, false, rows, cols, cols, 1.0f, x, b, 1.0f, next);
    } else {
      kernels::gemm(backend, false, false, rows, cols, rows, 1.0f, b, x, 1.0f, next);
    }
    std::swap(x, next);
  }
  kernels::scale(backend, 1.0f, x, matrix);
}

}  // namespace lowcomm
