#pragma once
// Where dct.hpp's blocks lie in the tensor, shared by the Reference and the Cpu backend.
#include <cstdint>

#include "lowcomm/kernels/blocks.hpp"

namespace lowcomm::kernels::detail {

// Offset in the tensor of element (0, 0) of a block numbered row-major over
// (batch, block row, block col).
inline std::int64_t block_origin(const BlockLayout& l, std::int64_t block) {
  const std::int64_t per_row = l.cols / l.block_cols;
  const std::int64_t per_matrix = (l.rows / l.block_rows) * per_row;
  const std::int64_t b = block / per_matrix;
  const std::int64_t br = (block % per_matrix) / per_row;
  const std::int64_t bc = block % per_row;
  return (b * l.rows + br * l.block_rows) * l.cols + bc * l.block_cols;
}

}  // namespace lowcomm::kernels::detail
