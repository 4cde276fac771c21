#pragma once
// The optimizers' updates (optimizer_updates.cpp) are element-wise: the Cpu backend runs each over
// a tensor in pieces on the rank's OpenMP threads, and the bits do not depend on how the pieces
// fall. Pieces start on multiples of 16 elements (whole cache lines); a tensor below
// kParallelElements is one piece.
#include <algorithm>
#include <cstddef>

namespace lowcomm::kernels::cpu_detail {

inline constexpr std::size_t kParallelElements = std::size_t{1} << 15;

// body(begin, end) for consecutive pieces covering [0, n).
template <class Body>
void for_each_piece(std::size_t n, const Body& body) {
  const std::size_t pieces = std::max<std::size_t>(1, n / kParallelElements);
#pragma omp parallel for schedule(static) if (pieces > 1)
  for (std::size_t piece = 0; piece < pieces; ++piece) {
    const std::size_t begin = n / pieces * piece / 16 * 16;
    const std::size_t end = piece + 1 == pieces ? n : n / pieces * (piece + 1) / 16 * 16;
    body(begin, end);
  }
}

}  // namespace lowcomm::kernels::cpu_detail
