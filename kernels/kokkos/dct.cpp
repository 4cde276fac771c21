// Block DCT-II and its inverse (dct.hpp), as the Reference computes them: two passes of float
// sums in ascending order of the summed index, every output one work item. The passes go
// through a tensor-sized intermediate rather than per-block scratch, which keeps the kernel to
// plain parallel loops that every Kokkos space runs.
#include <Kokkos_Core.hpp>

#include <vector>

#include "kokkos_views.hpp"
#include "lowcomm/kernels/dct.hpp"

namespace lowcomm::kernels::kokkos_backend {

namespace {

// Where block `block`'s element (r, c) sits in the tensor (block_origin in kernels/dct_blocks.hpp).
struct BlockAddress {
  std::int64_t rows, cols, block_rows, block_cols;
  KOKKOS_INLINE_FUNCTION std::int64_t operator()(std::int64_t block, std::int64_t r, std::int64_t c) const {
    const std::int64_t per_row = cols / block_cols;
    const std::int64_t per_matrix = (rows / block_rows) * per_row;
    const std::int64_t b = block / per_matrix;
    const std::int64_t br = (block % per_matrix) / per_row;
    const std::int64_t bc = block % per_row;
    return (b * rows + br * block_rows + r) * cols + bc * block_cols + c;
  }
};

BlockAddress address_of(const BlockLayout& l) { return {l.rows, l.cols, l.block_rows, l.block_cols}; }

}  // namespace

void dct_encode_blocks(const BlockLayout& layout, std::span<const float> tensor, std::span<float> coefficients) {
  const std::int64_t h = layout.block_rows, w = layout.block_cols, size = layout.size();
  const std::vector<float> basis_h = dct_basis(h), basis_w = dct_basis(w);
  const auto ch = input(std::span<const float>(basis_h));
  const auto cw = input(std::span<const float>(basis_w));
  const auto x = input(tensor);
  const BlockAddress at = address_of(layout);
  DeviceView<float> t(Kokkos::view_alloc(Kokkos::WithoutInitializing, "lowcomm::dct_encode::t"),
                      static_cast<std::size_t>(size));
  // T[r][j] = Σ_c X[r][c]·C_w[j][c], block after block in coefficient layout.
  Kokkos::parallel_for("lowcomm::dct_encode::rows", Range(0, size), KOKKOS_LAMBDA(const std::int64_t e) {
    const std::int64_t block = e / (h * w), r = e % (h * w) / w, j = e % w;
    float acc = 0.0f;
    for (std::int64_t c = 0; c < w; ++c) acc += x(at(block, r, c)) * cw(j * w + c);
    t(e) = acc;
  });
  Output<float> out(coefficients);
  const auto q = out.view();
  // Q[i][j] = Σ_r C_h[i][r]·T[r][j].
  Kokkos::parallel_for("lowcomm::dct_encode::columns", Range(0, size), KOKKOS_LAMBDA(const std::int64_t e) {
    const std::int64_t block = e / (h * w), i = e % (h * w) / w, j = e % w;
    float acc = 0.0f;
    for (std::int64_t r = 0; r < h; ++r) acc += ch(i * h + r) * t(block * h * w + r * w + j);
    q(e) = acc;
  });
  out.finish();
}

void dct_decode_blocks(const BlockLayout& layout, std::span<const float> coefficients, std::span<float> tensor) {
  const std::int64_t h = layout.block_rows, w = layout.block_cols, size = layout.size();
  const std::vector<float> basis_h = dct_basis(h), basis_w = dct_basis(w);
  const auto ch = input(std::span<const float>(basis_h));
  const auto cw = input(std::span<const float>(basis_w));
  const auto q = input(coefficients);
  const BlockAddress at = address_of(layout);
  DeviceView<float> u(Kokkos::view_alloc(Kokkos::WithoutInitializing, "lowcomm::dct_decode::u"),
                      static_cast<std::size_t>(size));
  // U[i][c] = Σ_j Q[i][j]·C_w[j][c].
  Kokkos::parallel_for("lowcomm::dct_decode::rows", Range(0, size), KOKKOS_LAMBDA(const std::int64_t e) {
    const std::int64_t block = e / (h * w), i = e % (h * w) / w, c = e % w;
    float acc = 0.0f;
    for (std::int64_t j = 0; j < w; ++j) acc += q(block * h * w + i * w + j) * cw(j * w + c);
    u(e) = acc;
  });
  Output<float> out(tensor);
  const auto x = out.view();
  // X[r][c] = Σ_i C_h[i][r]·U[i][c], written back in tensor layout.
  Kokkos::parallel_for("lowcomm::dct_decode::columns", Range(0, size), KOKKOS_LAMBDA(const std::int64_t e) {
    const std::int64_t block = e / (h * w), r = e % (h * w) / w, c = e % w;
    float acc = 0.0f;
    for (std::int64_t i = 0; i < h; ++i) acc += ch(i * h + r) * u(block * h * w + i * w + c);
    x(at(block, r, c)) = acc;
  });
  out.finish();
}

}  // namespace lowcomm::kernels::kokkos_backend
