// Gram-Schmidt on the columns of a row-major matrix (include/lowcomm/kernels/linalg.hpp).
// Reference walks each column down the rows, as the paper's code reads. Columns are strided in a
// row-major matrix, so Cpu instead walks rows: for column i it normalises p_i and accumulates
// ⟨p_i, p_j⟩ for every j > i in one pass (contiguous, vectorisable across j), then subtracts the
// projections and accumulates ‖p_{i+1}‖² in a second pass. Rows are cut into fixed blocks summed
// separately and then in block order, so threads can share the work while the result stays
// independent of the thread count.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <fmt/format.h>

#include "lowcomm/error.hpp"
#if LOWCOMM_HAVE_KOKKOS
#include "../kokkos/kokkos_backend.hpp"
#endif
#if LOWCOMM_HAVE_CUDA
#include "../cuda/cuda_backend.hpp"
#endif
#include "lowcomm/kernels/linalg.hpp"

namespace lowcomm::kernels {
namespace {

// Rows per partial sum: long enough to amortise a thread's start, short enough that a P of a few
// thousand rows still spreads over the cores.
constexpr std::int64_t kBlockRows = 256;
constexpr std::int64_t kParallelMin = std::int64_t{1} << 16;

void check_arguments(std::span<float> matrix, std::int64_t rows, std::int64_t cols,
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

void orthonormalize_reference(std::span<float> matrix, std::int64_t rows, std::int64_t cols,
                              float epsilon) {
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

void orthonormalize_cpu(std::span<float> matrix, std::int64_t rows, std::int64_t cols,
                        float epsilon) {
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

}  // namespace

void orthonormalize_columns(Backend backend, std::span<float> matrix, std::int64_t rows,
                            std::int64_t cols, float epsilon) {
  check_arguments(matrix, rows, cols, epsilon);
  switch (backend) {
    case Backend::Reference: return orthonormalize_reference(matrix, rows, cols, epsilon);
    case Backend::Cpu: return orthonormalize_cpu(matrix, rows, cols, epsilon);
    case Backend::Kokkos:
#if LOWCOMM_HAVE_KOKKOS
      return kokkos_backend::orthonormalize_columns(matrix, rows, cols, epsilon);
#endif
      break;
    case Backend::Cuda:
#if LOWCOMM_HAVE_CUDA
      return cuda_backend::orthonormalize_columns(matrix, rows, cols, epsilon);
#endif
      break;
  }
  unsupported("orthonormalize_columns", backend);
}

}  // namespace lowcomm::kernels
