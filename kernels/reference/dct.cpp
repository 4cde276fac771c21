// dct.hpp's definition: one output at a time, each a plain dot product.
#include <vector>

#include "../backend_kernels.hpp"
#include "../dct_blocks.hpp"
#include "lowcomm/kernels/dct.hpp"

namespace lowcomm::kernels::reference_backend {

using detail::block_origin;

void dct_encode_blocks(const BlockLayout& l, std::span<const float> x, std::span<float> q) {
  const std::int64_t h = l.block_rows;
  const std::int64_t w = l.block_cols;
  const std::vector<float> ch = dct_basis(h);
  const std::vector<float> cw = dct_basis(w);
  std::vector<float> t(static_cast<std::size_t>(h * w));
  for (std::int64_t block = 0; block < l.blocks(); ++block) {
    const float* xb = x.data() + block_origin(l, block);
    float* qb = q.data() + block * h * w;
    for (std::int64_t r = 0; r < h; ++r) {
      for (std::int64_t j = 0; j < w; ++j) {
        float acc = 0.0f;
        for (std::int64_t c = 0; c < w; ++c) acc += xb[r * l.cols + c] * cw[j * w + c];
        t[r * w + j] = acc;
      }
    }
    for (std::int64_t i = 0; i < h; ++i) {
      for (std::int64_t j = 0; j < w; ++j) {
        float acc = 0.0f;
        for (std::int64_t r = 0; r < h; ++r) acc += ch[i * h + r] * t[r * w + j];
        qb[i * w + j] = acc;
      }
    }
  }
}

void dct_decode_blocks(const BlockLayout& l, std::span<const float> q, std::span<float> x) {
  const std::int64_t h = l.block_rows;
  const std::int64_t w = l.block_cols;
  const std::vector<float> ch = dct_basis(h);
  const std::vector<float> cw = dct_basis(w);
  std::vector<float> u(static_cast<std::size_t>(h * w));
  for (std::int64_t block = 0; block < l.blocks(); ++block) {
    const float* qb = q.data() + block * h * w;
    float* xb = x.data() + block_origin(l, block);
    for (std::int64_t i = 0; i < h; ++i) {
      for (std::int64_t c = 0; c < w; ++c) {
        float acc = 0.0f;
        for (std::int64_t j = 0; j < w; ++j) acc += qb[i * w + j] * cw[j * w + c];
        u[i * w + c] = acc;
      }
    }
    for (std::int64_t r = 0; r < h; ++r) {
      for (std::int64_t c = 0; c < w; ++c) {
        float acc = 0.0f;
        for (std::int64_t i = 0; i < h; ++i) acc += ch[i * h + r] * u[i * w + c];
        xb[r * l.cols + c] = acc;
      }
    }
  }
}

}  // namespace lowcomm::kernels::reference_backend
