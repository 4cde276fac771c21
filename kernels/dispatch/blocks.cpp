#include "lowcomm/kernels/blocks.hpp"

#include <fmt/format.h>

#include "lowcomm/error.hpp"

namespace lowcomm::kernels {

namespace {

// a·b, or an Error naming the kernel when the element count does not fit in int64.
std::int64_t checked_product(std::int64_t a, std::int64_t b, std::string_view kernel) {
  std::int64_t product = 0;
  if (__builtin_mul_overflow(a, b, &product)) {
    throw Error(fmt::format("{}: the tensor has more elements than int64 can count", kernel));
  }
  return product;
}

}  // namespace

std::int64_t block_length(std::int64_t n, std::int64_t chunk) {
  if (n < 1) throw Error(fmt::format("block_length: dimension {} must be >= 1", n));
  if (chunk < 1) throw Error(fmt::format("block_length: chunk {} must be >= 1", chunk));
  if (n <= chunk) return n;
  // Two ways to the answer, each bounded by min(chunk, sqrt(n)) divisions: walk down from chunk
  // when chunk is small, else scan the divisor pairs (d, n/d) with d <= sqrt(n), since the
  // answer is a small d or the partner of one.
  if (chunk <= n / chunk) {
    std::int64_t d = chunk;
    while (n % d != 0) --d;
    return d;
  }
  std::int64_t best = 1;
  for (std::int64_t d = 1; d <= n / d; ++d) {
    if (n % d != 0) continue;
    if (d > best) best = d;
    if (n / d <= chunk && n / d > best) best = n / d;
  }
  return best;
}

BlockLayout block_layout(std::span<const std::int64_t> shape, std::int64_t chunk) {
  if (chunk < 1) throw Error(fmt::format("block_layout: chunk {} must be >= 1", chunk));
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] < 1) {
      throw Error(fmt::format("block_layout: dimension {} of the shape is {}; every dimension "
                              "must be >= 1 (skip empty tensors)", d, shape[d]));
    }
  }
  BlockLayout layout;
  if (shape.size() <= 1) {
    layout.cols = shape.empty() ? 1 : shape[0];
  } else {
    for (std::size_t d = 0; d + 2 < shape.size(); ++d) {
      layout.batch = checked_product(layout.batch, shape[d], "block_layout");
    }
    layout.rows = shape[shape.size() - 2];
    layout.cols = shape[shape.size() - 1];
  }
  layout.block_rows = block_length(layout.rows, chunk);
  layout.block_cols = block_length(layout.cols, chunk);
  check_block_layout(layout, "block_layout");
  return layout;
}

void check_block_layout(const BlockLayout& layout, std::string_view kernel) {
  const auto& l = layout;
  if (l.batch < 1 || l.rows < 1 || l.cols < 1 || l.block_rows < 1 || l.block_cols < 1) {
    throw Error(fmt::format("{}: block layout batch={} rows={} cols={} block={}x{} has a field "
                            "< 1", kernel, l.batch, l.rows, l.cols, l.block_rows, l.block_cols));
  }
  if (l.rows % l.block_rows != 0 || l.cols % l.block_cols != 0) {
    throw Error(fmt::format("{}: block {}x{} does not divide the {}x{} matrix", kernel,
                            l.block_rows, l.block_cols, l.rows, l.cols));
  }
  checked_product(checked_product(l.batch, l.rows, kernel), l.cols, kernel);
}

}  // namespace lowcomm::kernels
