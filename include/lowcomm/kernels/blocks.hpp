#pragma once
// How a tensor is cut into the 2-D blocks that the DCT and per-block top-k work on (REFERENCE.md
// §1 "Blocking"). Each dimension is blocked on its own by the largest divisor that fits the
// chunk, so nothing is ever padded; a prime dimension larger than the chunk degrades to blocks of
// length 1, which callers may want to warn about.
#include <cstdint>
#include <span>
#include <string_view>

namespace lowcomm::kernels {

// n itself when n <= chunk, else the largest divisor of n that is <= chunk.
// Examples: (2048, 64) -> 64, (1000, 64) -> 50, (96, 64) -> 48, (50257, 64) -> 29.
// Throws lowcomm::Error when n < 1 or chunk < 1.
std::int64_t block_length(std::int64_t n, std::int64_t chunk);

// A tensor viewed as batch x rows x cols, cut into blocks of block_rows x block_cols.
// Blocks are numbered row-major over (batch, block row, block col); inside a block the elements
// are numbered row-major (row * block_cols + col).
struct BlockLayout {
  std::int64_t batch = 1;
  std::int64_t rows = 1;
  std::int64_t cols = 1;
  std::int64_t block_rows = 1;
  std::int64_t block_cols = 1;

  std::int64_t blocks() const { return batch * (rows / block_rows) * (cols / block_cols); }
  std::int64_t block_size() const { return block_rows * block_cols; }
  std::int64_t size() const { return batch * rows * cols; }

  bool operator==(const BlockLayout&) const = default;
};

// The layout of a tensor of the given shape: 0-D and 1-D tensors of n elements are 1 x n
// (blocks of 1 x block_length(n, chunk)); 2-D tensors block rows and columns independently;
// higher ranks fold the leading dimensions into the batch and block the last two.
// Throws lowcomm::Error for a dimension < 1 (callers skip empty tensors), a chunk < 1, or an
// element count that does not fit in int64.
BlockLayout block_layout(std::span<const std::int64_t> shape, std::int64_t chunk);

// Throws lowcomm::Error, naming `kernel`, unless every field is >= 1, the block lengths divide
// the matrix dimensions and size() fits in int64. Kernels taking a BlockLayout call this first,
// since a layout may be built by hand.
void check_block_layout(const BlockLayout& layout, std::string_view kernel);

}  // namespace lowcomm::kernels
