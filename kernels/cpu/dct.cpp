// dct.hpp on the Cpu backend: per-block loops for small transforms, chunked matrix products
// (the library's BLAS) for larger ones: the Reference's transform within float rounding (dct.hpp).
#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "../backend_kernels.hpp"
#include "../dct_blocks.hpp"
#include "blas.hpp"
#include "dct_chunks.hpp"
#include "lowcomm/core/simd_clones.hpp"
#include "lowcomm/kernels/dct.hpp"

namespace lowcomm::kernels::cpu_backend {

using detail::block_origin;

namespace {

// Multiply-adds below which starting the OpenMP team costs more than the transform itself.
constexpr std::int64_t kParallelWork = std::int64_t{1} << 16;

// ---- Cpu ---------------------------------------------------------------------------------------
//
// Small transforms run the per-block loops below (blocks in parallel; inside a block, each sum
// becomes a row update vectorised across the outputs it feeds, out[:] += a · row[:]).
// Larger ones are rewritten as a few large matrix products (the library's BLAS, blas.hpp), over
// "chunks": up to kChunkFloats elements of one block row (a slab of h tensor rows), i.e. nb
// consecutive blocks of the same block row. For a chunk X (h × nb·w, tensor layout):
//   encode: Y = C_h · X (one product), Y reordered block by block into Yb (nb·h × w, which is
//           the coefficient layout), then Q = Yb · C_wᵀ, interleaved into the coefficients;
//   decode: V = Q · C_w (the nb·h × w coefficient rows in one product), V reordered back into
//           tensor layout, then X = C_hᵀ · V written straight into the tensor.
// A block length of 1 has the basis [1], so that product is skipped (h = 1 makes the whole
// tensor a single block row already in coefficient order).
//
// Determinism: the chunks are cut from the layout alone, every product runs inside the chunk
// loop's parallel region, where the BLAS computes it on the calling thread (blas.hpp) with bits
// that depend on its sizes only, and the threads only decide which chunks each of them does. So
// the result is the same run to run and for every OMP_NUM_THREADS.

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

void encode_loops(const BlockLayout& l, std::span<const float> x, std::span<float> q) {
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

void decode_loops(const BlockLayout& l, std::span<const float> q, std::span<float> x) {
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

// Below this many multiply-adds (size · (h + w)) the loops beat setting up the products.
constexpr std::int64_t kProductWork = std::int64_t{1} << 17;
// Elements of the tensor per chunk (when a block is smaller): a chunk and its two scratch
// copies stay in L2.
constexpr std::int64_t kChunkFloats = std::int64_t{1} << 15;

// c (m × n, row stride ldc) = op(a) · op(b), op(a) m × k and op(b) k × n as detail::sgemm
// takes them: the library's one BLAS, called inside the chunk loop's parallel region (so on one
// thread, even when the tensor is a single chunk).
void product(bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n, std::int64_t k,
             const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float* c,
             std::int64_t ldc) {
  detail::sgemm(transpose_a, transpose_b, m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c, ldc);
}

// The even/odd split of a length-c basis. C[k][c-1-n] = (-1)^k C[k][n], so with
//   e[n] = x[n] + x[c-1-n], o[n] = x[n] - x[c-1-n]   (n < c/2; for odd c, e[c/2] = x[c/2])
// the transform y = C · x is y[2m] = Σ_n even[m][n] e[n] and y[2m+1] = Σ_n odd[m][n] o[n]:
// two half-size products, half the multiply-adds. (The odd rows' middle entry, cos(πk/2) in
// float, is dropped: it is below 1e-16.)
struct HalfBasis {
  std::int64_t ne = 0, no = 0;  // (c + 1) / 2 even rows, c / 2 odd rows
  std::vector<float> even;      // ne × ne, row-major: C[2m][n]
  std::vector<float> odd;       // no × no, row-major: C[2m+1][n]
};

std::shared_ptr<const HalfBasis> cached_half_basis(std::int64_t length) {
  static std::mutex mutex;
  static std::map<std::int64_t, std::shared_ptr<const HalfBasis>> cache;
  const auto full = cached_basis(length);
  const std::lock_guard lock(mutex);
  auto& slot = cache[length];
  if (!slot) {
    auto half = std::make_shared<HalfBasis>();
    half->ne = (length + 1) / 2;
    half->no = length / 2;
    for (std::int64_t m = 0; m < half->ne; ++m) {
      for (std::int64_t n = 0; n < half->ne; ++n) {
        half->even.push_back(full->c[2 * m * length + n]);
      }
    }
    for (std::int64_t m = 0; m < half->no; ++m) {
      for (std::int64_t n = 0; n < half->no; ++n) {
        half->odd.push_back(full->c[(2 * m + 1) * length + n]);
      }
    }
    slot = std::move(half);
  }
  return slot;
}

// The chunking of a layout: `slabs` block rows of `cols` columns, each cut into chunks of
// `per_chunk` blocks (the last chunk of a slab may have fewer).
struct Chunks {
  std::int64_t h, w, cols, slabs, blocks_per_slab, per_chunk, chunks_per_slab;

  explicit Chunks(const BlockLayout& l)
      : h(l.block_rows),
        w(l.block_cols),
        // With h = 1 the whole tensor is one block row already in coefficient order.
        cols(h == 1 ? l.size() : l.cols),
        slabs(h == 1 ? 1 : l.batch * (l.rows / h)),
        blocks_per_slab(cols / w),
        per_chunk(std::clamp<std::int64_t>(kChunkFloats / (h * w), 1, blocks_per_slab)),
        chunks_per_slab((blocks_per_slab + per_chunk - 1) / per_chunk) {}

  std::int64_t count() const { return slabs * chunks_per_slab; }
  std::int64_t slab(std::int64_t chunk) const { return chunk / chunks_per_slab; }
  std::int64_t first_block(std::int64_t chunk) const {
    return (chunk % chunks_per_slab) * per_chunk;
  }
  std::int64_t blocks(std::int64_t chunk) const {
    return std::min(per_chunk, blocks_per_slab - first_block(chunk));
  }
  // Offsets of the chunk's first element in the tensor and in the coefficients.
  std::int64_t tensor_offset(std::int64_t chunk) const {
    return slab(chunk) * h * cols + first_block(chunk) * w;
  }
  std::int64_t coefficient_offset(std::int64_t chunk) const {
    return (slab(chunk) * blocks_per_slab + first_block(chunk)) * h * w;
  }
};

// Row of the even/odd ordered stage-h result holding coefficient row i.
inline std::int64_t split_row(const HalfBasis& half, std::int64_t i) {
  return (i % 2 == 0) ? i / 2 : half.ne + i / 2;
}

// out[0..ne) = e, out[ne..c) = o of x (see HalfBasis).
inline void split(const float* x, std::int64_t c, std::int64_t ne, float* out) {
  const std::int64_t no = c / 2;
#pragma omp simd
  for (std::int64_t n = 0; n < no; ++n) {
    out[n] = x[n] + x[c - 1 - n];
    out[ne + n] = x[n] - x[c - 1 - n];
  }
  if (ne > no) out[no] = x[no];
}

// The inverse of split for the products' outputs: x[n] = e[n] + o[n], x[c-1-n] = e[n] - o[n].
inline void join(const float* e, const float* o, std::int64_t c, float* x) {
  const std::int64_t no = c / 2;
#pragma omp simd
  for (std::int64_t n = 0; n < no; ++n) {
    x[n] = e[n] + o[n];
    x[c - 1 - n] = e[n] - o[n];
  }
  if (c % 2 == 1) x[no] = e[no];
}

// One chunk of the encode (a function of its own so that its loops get SIMD clones); qc: where
// the chunk's coefficients go (its blocks, consecutive).
LOWCOMM_SIMD_CLONES
void encode_chunk(const Chunks& chunks, const HalfBasis* hh, const HalfBasis* hw, std::span<const float> x,
                  float* qc, std::int64_t chunk, std::vector<float>& a, std::vector<float>& y) {
  const std::int64_t h = chunks.h, w = chunks.w, cols = chunks.cols;
  const std::int64_t nb = chunks.blocks(chunk);
  const std::int64_t n = nb * w;
  const float* xc = x.data() + chunks.tensor_offset(chunk);
  // Stage h: Y = C_h · X (h × n), its rows in even/odd order (split_row).
  const float* stage_h = xc;
  std::int64_t stage_h_stride = cols;
  if (h > 1) {
    for (std::int64_t r = 0; r < hh->no; ++r) {
      const float* top = xc + r * cols;
      const float* bottom = xc + (h - 1 - r) * cols;
      float* e = &a[r * n];
      float* o = &a[(hh->ne + r) * n];
#pragma omp simd
      for (std::int64_t j = 0; j < n; ++j) {
        e[j] = top[j] + bottom[j];
        o[j] = top[j] - bottom[j];
      }
    }
    if (h % 2 == 1) std::copy_n(xc + hh->no * cols, n, &a[hh->no * n]);
    product(false, false, hh->ne, n, hh->ne, hh->even.data(), hh->ne, a.data(), n, y.data(), n);
    product(false, false, hh->no, n, hh->no, hh->odd.data(), hh->no, &a[hh->ne * n], n,
            &y[hh->ne * n], n);
    stage_h = y.data();
    stage_h_stride = n;
  }
  // Stage w: each block's row i (w values) becomes coefficient row b·h + i.
  if (w == 1) {
    for (std::int64_t b = 0; b < nb; ++b) {
      for (std::int64_t i = 0; i < h; ++i) {
        qc[b * h + i] = stage_h[split_row(*hh, i) * stage_h_stride + b];
      }
    }
    return;
  }
  for (std::int64_t b = 0; b < nb; ++b) {
    for (std::int64_t i = 0; i < h; ++i) {
      split(stage_h + split_row(*hh, i) * stage_h_stride + b * w, w, hw->ne,
            &a[(b * h + i) * w]);
    }
  }
  // Q[:, 2m] = E · evenᵀ, Q[:, 2m+1] = O · oddᵀ: the products fill [even | odd] columns of
  // z, which are then interleaved into the coefficients. (The first stage's result is no
  // longer needed, so z reuses its buffer.)
  const std::int64_t rows = nb * h;
  float* z = y.data();
  product(false, true, rows, hw->ne, hw->ne, a.data(), w, hw->even.data(), hw->ne, z, w);
  product(false, true, rows, hw->no, hw->no, &a[hw->ne], w, hw->odd.data(), hw->no,
          z + hw->ne, w);
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* in = z + r * w;
    float* out = qc + r * w;
    for (std::int64_t m = 0; m < hw->no; ++m) {
      out[2 * m] = in[m];
      out[2 * m + 1] = in[hw->ne + m];
    }
    if (hw->ne > hw->no) out[w - 1] = in[hw->no];
  }
}

// A layout's chunks and half bases, and a loop over the chunks on the OpenMP threads: body(chunk,
// a, y, local) with the thread's scratch (a, y) and, when `with_local` is set, a chunk-sized
// buffer of coefficients of its own (for the chunk-streaming kernels).
struct ChunkedTransform {
  Chunks chunks;
  std::shared_ptr<const HalfBasis> hh, hw;
  explicit ChunkedTransform(const BlockLayout& l)
      : chunks(l), hh(cached_half_basis(chunks.h)), hw(cached_half_basis(chunks.w)) {}

  template <class Body>
  void for_each_chunk(bool with_local, const Body& body) const {
    const auto size = static_cast<std::size_t>(chunks.h * chunks.per_chunk * chunks.w);
    // Always a parallel region, even for one chunk: see `product`.
#pragma omp parallel
    {
      std::vector<float> a(size), y(size), local(with_local ? size : 0);
#pragma omp for schedule(static)
      for (std::int64_t chunk = 0; chunk < chunks.count(); ++chunk) body(chunk, a, y, local.data());
    }
  }
  std::int64_t first_block(std::int64_t chunk) const {
    return chunks.coefficient_offset(chunk) / (chunks.h * chunks.w);
  }
};

void encode_products(const BlockLayout& l, std::span<const float> x, std::span<float> q) {
  const ChunkedTransform t(l);
  t.for_each_chunk(false, [&](std::int64_t chunk, std::vector<float>& a, std::vector<float>& y, float*) {
    encode_chunk(t.chunks, t.hh.get(), t.hw.get(), x, q.data() + t.chunks.coefficient_offset(chunk), chunk, a, y);
  });
}

// One chunk of the decode (a function of its own so that its loops get SIMD clones); qc: the
// chunk's coefficients (its blocks, consecutive).
LOWCOMM_SIMD_CLONES
void decode_chunk(const Chunks& chunks, const HalfBasis* hh, const HalfBasis* hw, const float* qc,
                  std::span<float> x, std::int64_t chunk, std::vector<float>& a, std::vector<float>& y) {
  const std::int64_t h = chunks.h, w = chunks.w, cols = chunks.cols;
  const std::int64_t nb = chunks.blocks(chunk);
  const std::int64_t n = nb * w;
  float* xc = x.data() + chunks.tensor_offset(chunk);
  // Stage h input: row split_row(i) of G (h × n, tensor column order), or the tensor itself
  // when h = 1.
  float* g = h > 1 ? a.data() : xc;
  if (w == 1) {
    for (std::int64_t b = 0; b < nb; ++b) {
      for (std::int64_t i = 0; i < h; ++i) g[split_row(*hh, i) * n + b] = qc[b * h + i];
    }
  } else {
    // Coefficient rows (nb·h of w) to [even columns | odd columns] ...
    const std::int64_t rows = nb * h;
    for (std::int64_t r = 0; r < rows; ++r) {
      const float* in = qc + r * w;
      float* out = &a[r * w];
      for (std::int64_t m = 0; m < hw->no; ++m) {
        out[m] = in[2 * m];
        out[hw->ne + m] = in[2 * m + 1];
      }
      if (hw->ne > hw->no) out[hw->no] = in[w - 1];
    }
    // ... then e = E · even, o = O · odd ...
    product(false, false, rows, hw->ne, hw->ne, a.data(), w, hw->even.data(), hw->ne, y.data(), w);
    product(false, false, rows, hw->no, hw->no, &a[hw->ne], w, hw->odd.data(), hw->no,
            &y[hw->ne], w);
    // ... and x = join(e, o), each block row to its place in G.
    for (std::int64_t b = 0; b < nb; ++b) {
      for (std::int64_t i = 0; i < h; ++i) {
        const float* in = &y[(b * h + i) * w];
        join(in, in + hw->ne, w, g + split_row(*hh, i) * n + b * w);
      }
    }
  }
  if (h == 1) return;
  // Stage h: e = evenᵀ · G_even, o = oddᵀ · G_odd, x = join(e, o) row by row.
  product(true, false, hh->ne, n, hh->ne, hh->even.data(), hh->ne, a.data(), n, y.data(), n);
  product(true, false, hh->no, n, hh->no, hh->odd.data(), hh->no, &a[hh->ne * n], n,
          &y[hh->ne * n], n);
  for (std::int64_t r = 0; r < hh->no; ++r) {
    const float* e = &y[r * n];
    const float* o = &y[(hh->ne + r) * n];
    float* top = xc + r * cols;
    float* bottom = xc + (h - 1 - r) * cols;
#pragma omp simd
    for (std::int64_t j = 0; j < n; ++j) {
      top[j] = e[j] + o[j];
      bottom[j] = e[j] - o[j];
    }
  }
  if (h % 2 == 1) std::copy_n(&y[hh->no * n], n, xc + hh->no * cols);
}

void decode_products(const BlockLayout& l, std::span<const float> q, std::span<float> x) {
  const ChunkedTransform t(l);
  t.for_each_chunk(false, [&](std::int64_t chunk, std::vector<float>& a, std::vector<float>& y, float*) {
    decode_chunk(t.chunks, t.hh.get(), t.hw.get(), q.data() + t.chunks.coefficient_offset(chunk), x, chunk, a, y);
  });
}

bool use_loops(const BlockLayout& l) { return l.size() < kProductWork / (l.block_rows + l.block_cols); }

}  // namespace

void dct_encode_blocks(const BlockLayout& l, std::span<const float> x, std::span<float> q) {
  if (use_loops(l)) return encode_loops(l, x, q);
  encode_products(l, x, q);
}

void dct_decode_blocks(const BlockLayout& l, std::span<const float> q, std::span<float> x) {
  if (use_loops(l)) return decode_loops(l, q, x);
  decode_products(l, q, x);
}

// The chunk-streaming transforms of dct_chunks.hpp.
void dct_encode_chunks(const BlockLayout& l, std::span<const float> x, const ChunkConsumer& consume) {
  if (use_loops(l)) {
    std::vector<float> q(static_cast<std::size_t>(l.size()));
    encode_loops(l, x, q);
    consume(0, l.blocks(), q.data());
    return;
  }
  const ChunkedTransform t(l);
  t.for_each_chunk(true, [&](std::int64_t chunk, std::vector<float>& a, std::vector<float>& y, float* local) {
    encode_chunk(t.chunks, t.hh.get(), t.hw.get(), x, local, chunk, a, y);
    consume(t.first_block(chunk), t.chunks.blocks(chunk), local);
  });
}

void dct_decode_chunks(const BlockLayout& l, const ChunkProducer& produce, std::span<float> x) {
  if (use_loops(l)) {
    std::vector<float> q(static_cast<std::size_t>(l.size()));
    produce(0, l.blocks(), q.data());
    decode_loops(l, q, x);
    return;
  }
  const ChunkedTransform t(l);
  t.for_each_chunk(true, [&](std::int64_t chunk, std::vector<float>& a, std::vector<float>& y, float* local) {
    produce(t.first_block(chunk), t.chunks.blocks(chunk), local);
    decode_chunk(t.chunks, t.hh.get(), t.hw.get(), local, x, chunk, a, y);
  });
}

}  // namespace lowcomm::kernels::cpu_backend
