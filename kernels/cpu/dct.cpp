#include "lowcomm/kernels/dct.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <numbers>
#include <string_view>

#include <fmt/format.h>

#include "lowcomm/error.hpp"

namespace lowcomm::kernels {

namespace {

constexpr std::string_view kEncode = "dct_encode_blocks";
constexpr std::string_view kDecode = "dct_decode_blocks";

// Multiply-adds below which starting the OpenMP team costs more than the transform itself.
constexpr std::int64_t kParallelWork = std::int64_t{1} << 16;

bool overlap(std::span<const float> a, std::span<const float> b) {
  if (a.empty() || b.empty()) return false;
  const auto a0 = reinterpret_cast<std::uintptr_t>(a.data());
  const auto b0 = reinterpret_cast<std::uintptr_t>(b.data());
  return a0 < b0 + b.size_bytes() && b0 < a0 + a.size_bytes();
}

void check_arguments(std::string_view kernel, const BlockLayout& layout,
                     std::span<const float> input, std::span<const float> output) {
  check_block_layout(layout, kernel);
  const auto size = static_cast<std::size_t>(layout.size());
  if (input.size() != size || output.size() != size) {
    throw Error(fmt::format("{}: the layout has {} elements but the input span has {} and the "
                            "output span {}", kernel, size, input.size(), output.size()));
  }
  if (overlap(input, output)) {
    throw Error(fmt::format("{}: input and output spans overlap; the transform cannot run in "
                            "place", kernel));
  }
}

// Offset in the tensor of element (0, 0) of a block numbered row-major over
// (batch, block row, block col).
std::int64_t block_origin(const BlockLayout& l, std::int64_t block) {
  const std::int64_t per_row = l.cols / l.block_cols;
  const std::int64_t per_matrix = (l.rows / l.block_rows) * per_row;
  const std::int64_t b = block / per_matrix;
  const std::int64_t br = (block % per_matrix) / per_row;
  const std::int64_t bc = block % per_row;
  return (b * l.rows + br * l.block_rows) * l.cols + bc * l.block_cols;
}

// ---- Reference: one output at a time, each a plain dot product ----------------------------

void encode_reference(const BlockLayout& l, std::span<const float> x, std::span<float> q) {
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

void decode_reference(const BlockLayout& l, std::span<const float> q, std::span<float> x) {
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

// ---- Cpu: blocks in parallel; inside a block, each sum becomes a row update vectorised across
// the outputs it feeds (out[:] += a · row[:]), which adds the same terms in the same order as
// the dot products above.

struct Basis {
  std::vector<float> c;   // C[k][n], row-major
  std::vector<float> ct;  // Cᵀ, so that the encode's row updates read contiguous memory
};

// Bases are shared by every call and thread: computing a 64x64 one costs 4096 cosines, more than
// transforming a small bias vector.
std::shared_ptr<const Basis> cached_basis(std::int64_t length) {
  static std::mutex mutex;
  static std::map<std::int64_t, std::shared_ptr<const Basis>> cache;
  const std::lock_guard lock(mutex);
  auto& slot = cache[length];
  if (!slot) {
    auto basis = std::make_shared<Basis>();
    basis->c = dct_basis(length);
    basis->ct.resize(basis->c.size());
    for (std::int64_t k = 0; k < length; ++k) {
      for (std::int64_t n = 0; n < length; ++n) {
        basis->ct[n * length + k] = basis->c[k * length + n];
      }
    }
    slot = std::move(basis);
  }
  return slot;
}

// out[0..n) += a · row[0..n)
inline void add_scaled(float* out, float a, const float* row, std::int64_t n) {
#pragma omp simd
  for (std::int64_t j = 0; j < n; ++j) out[j] += a * row[j];
}

void encode_cpu(const BlockLayout& l, std::span<const float> x, std::span<float> q) {
  const std::int64_t h = l.block_rows;
  const std::int64_t w = l.block_cols;
  const auto bh = cached_basis(h);
  const auto bw = cached_basis(w);
  const float* ch = bh->c.data();
  const float* cwt = bw->ct.data();
  const std::int64_t blocks = l.blocks();
#pragma omp parallel if (l.size() > kParallelWork / (h + w))
  {
    std::vector<float> t(static_cast<std::size_t>(h * w));
#pragma omp for schedule(static)
    for (std::int64_t block = 0; block < blocks; ++block) {
      const float* xb = x.data() + block_origin(l, block);
      float* qb = q.data() + block * h * w;
      std::fill(t.begin(), t.end(), 0.0f);
      for (std::int64_t r = 0; r < h; ++r) {
        for (std::int64_t c = 0; c < w; ++c) {
          add_scaled(&t[r * w], xb[r * l.cols + c], cwt + c * w, w);
        }
      }
      std::fill(qb, qb + h * w, 0.0f);
      for (std::int64_t i = 0; i < h; ++i) {
        for (std::int64_t r = 0; r < h; ++r) add_scaled(qb + i * w, ch[i * h + r], &t[r * w], w);
      }
    }
  }
}

void decode_cpu(const BlockLayout& l, std::span<const float> q, std::span<float> x) {
  const std::int64_t h = l.block_rows;
  const std::int64_t w = l.block_cols;
  const auto bh = cached_basis(h);
  const auto bw = cached_basis(w);
  const float* cht = bh->ct.data();
  const float* cw = bw->c.data();
  const std::int64_t blocks = l.blocks();
#pragma omp parallel if (l.size() > kParallelWork / (h + w))
  {
    std::vector<float> u(static_cast<std::size_t>(h * w));
#pragma omp for schedule(static)
    for (std::int64_t block = 0; block < blocks; ++block) {
      const float* qb = q.data() + block * h * w;
      float* xb = x.data() + block_origin(l, block);
      std::fill(u.begin(), u.end(), 0.0f);
      for (std::int64_t i = 0; i < h; ++i) {
        for (std::int64_t j = 0; j < w; ++j) add_scaled(&u[i * w], qb[i * w + j], cw + j * w, w);
      }
      for (std::int64_t r = 0; r < h; ++r) {
        float* xr = xb + r * l.cols;
        std::fill(xr, xr + w, 0.0f);
        for (std::int64_t i = 0; i < h; ++i) add_scaled(xr, cht[r * h + i], &u[i * w], w);
      }
    }
  }
}

}  // namespace

std::vector<float> dct_basis(std::int64_t c) {
  std::int64_t elements = 0;
  if (c < 1 || __builtin_mul_overflow(c, c, &elements)) {
    throw Error(fmt::format("dct_basis: length {} must be >= 1 and its square fit in int64", c));
  }
  std::vector<float> basis(static_cast<std::size_t>(elements));
  for (std::int64_t k = 0; k < c; ++k) {
    const double scale = std::sqrt((k == 0 ? 1.0 : 2.0) / static_cast<double>(c));
    for (std::int64_t n = 0; n < c; ++n) {
      const double angle = std::numbers::pi * static_cast<double>(2 * n + 1) *
                           static_cast<double>(k) / (2.0 * static_cast<double>(c));
      basis[k * c + n] = static_cast<float>(scale * std::cos(angle));
    }
  }
  return basis;
}

void dct_encode_blocks(Backend backend, const BlockLayout& layout, std::span<const float> tensor,
                       std::span<float> coefficients) {
  check_arguments(kEncode, layout, tensor, coefficients);
  switch (backend) {
    case Backend::Reference: return encode_reference(layout, tensor, coefficients);
    case Backend::Cpu: return encode_cpu(layout, tensor, coefficients);
    case Backend::Cuda: break;
  }
  unsupported(kEncode, backend);
}

void dct_decode_blocks(Backend backend, const BlockLayout& layout,
                       std::span<const float> coefficients, std::span<float> tensor) {
  check_arguments(kDecode, layout, coefficients, tensor);
  switch (backend) {
    case Backend::Reference: return decode_reference(layout, coefficients, tensor);
    case Backend::Cpu: return decode_cpu(layout, coefficients, tensor);
    case Backend::Cuda: break;
  }
  unsupported(kDecode, backend);
}

}  // namespace lowcomm::kernels
