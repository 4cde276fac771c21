// dct.hpp on the Cpu backend: per-block loops for small transforms, chunks of blocks through Lee's
// fast transform and the library's BLAS for larger ones: the Reference's transform within float
// rounding (dct.hpp; Lee's inverse rounds up to about twice as coarsely, fast_dct.hpp).
#include <algorithm>
#include <bit>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "../backend_kernels.hpp"
#include "../dct_blocks.hpp"
#include "blas.hpp"
#include "dct_chunks.hpp"
#include "fast_dct.hpp"
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
// Larger ones run over "chunks": up to kChunkFloats elements of one block row (a slab of h tensor
// rows), i.e. nb consecutive blocks of the same block row. For a chunk X (h × nb·w, tensor layout):
//   encode: Y = C_h · X (stage h), Y reordered block by block into Yb (nb·h × w, which is the
//           coefficient layout), then Q = Yb · C_wᵀ (stage w), interleaved into the coefficients;
//   decode: V = Q · C_w (the nb·h × w coefficient rows), V reordered back into tensor layout, then
//           X = C_hᵀ · V written straight into the tensor.
// Stage h runs Lee's fast transform (fast_dct.hpp: block heights up to 64 that are even with an
// odd part of at most 15, DeMo's 64 among them) across the chunk's columns, or else one large
// matrix product (the library's BLAS, blas.hpp) on the even/odd split basis. Stage w runs the
// products; in the decode of a chunk as sparse as DeMo's (k of h·w coefficients per block), each
// row instead sums the basis rows of its nonzero coefficients. A block length of 1 has the basis
// [1], so that stage is skipped (h = 1 makes the whole tensor a single block row already in
// coefficient order).
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

// Lee's transforms, shared like the bases (null where FastDct does not handle the length).
std::shared_ptr<const FastDct> cached_fast_dct(std::int64_t length) {
  static std::mutex mutex;
  static std::map<std::int64_t, std::shared_ptr<const FastDct>> cache;
  if (length == 1 || !FastDct::handles(length)) return nullptr;
  const std::lock_guard lock(mutex);
  auto& slot = cache[length];
  if (!slot) slot = std::make_shared<const FastDct>(length);
  return slot;
}

// The decode's stage w sums each coefficient row's nonzero entries times the basis rows when the
// rows have at most kRowSumColumns entries and at most 1 in kRowSumSparsity of the chunk's
// coefficients is nonzero: DeMo decodes k of h·w per block (0.8 % at k = 32 of 64 x 64, or W
// times that for W ranks' mean). Denser chunks and longer rows keep the products.
constexpr std::int64_t kRowSumColumns = 64;
constexpr std::int64_t kRowSumSparsity = 8;

LOWCOMM_SIMD_CLONES
std::int64_t count_nonzero(const float* values, std::int64_t n) {
  std::int64_t count = 0;
  for (std::int64_t i = 0; i < n; ++i) count += values[i] != 0.0f ? 1 : 0;
  return count;
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

// One thread's buffers: two of a chunk's size, and FastDct's scratch.
struct ChunkScratch {
  std::vector<float> a, y, lanes;
};

inline void grow(std::vector<float>& buffer, std::size_t size) {
  if (buffer.size() < size) buffer.resize(size);
}

// A layout's chunks and how each of its two stages runs, and a loop over the chunks on the
// OpenMP threads. Stage h (along the block's columns, tensor rows apart) runs Lee's recursion
// (fast_dct.hpp) where FastDct handles h, else the even/odd split products. Stage w (along a
// block row, contiguous) runs the products in the encode; in the decode of a sparse chunk, the
// rows sum the basis rows of their nonzero coefficients instead (kRowSumSparsity). Each choice
// depends on the layout and the chunk's own coefficients alone, so the bits do too, whatever the
// thread count.
struct ChunkedTransform {
  Chunks chunks;
  std::shared_ptr<const HalfBasis> hh, hw;
  std::shared_ptr<const FastDct> fast_h;  // null: stage h by products
  std::shared_ptr<const Basis> sum_w;     // null: the decode's stage w by products

  explicit ChunkedTransform(const BlockLayout& l)
      : chunks(l),
        hh(cached_half_basis(chunks.h)),
        hw(cached_half_basis(chunks.w)),
        fast_h(chunks.h > 1 ? cached_fast_dct(chunks.h) : nullptr),
        sum_w(chunks.w > 1 && chunks.w <= kRowSumColumns ? cached_basis(chunks.w) : nullptr) {}

  // Row of stage h's result (h × chunk columns) that holds coefficient row i: the products leave
  // the rows in even/odd order, Lee's recursion (and h = 1) in order.
  std::int64_t h_row(std::int64_t i) const {
    if (fast_h == nullptr && chunks.h > 1) return (i % 2 == 0) ? i / 2 : hh->ne + i / 2;
    return i;
  }

  // body(chunk, scratch, local): with the thread's scratch and, when `with_local` is set, a
  // chunk-sized buffer of coefficients of its own (for the chunk-streaming kernels).
  template <class Body>
  void for_each_chunk(bool with_local, const Body& body) const {
    const auto size = static_cast<std::size_t>(chunks.h * chunks.per_chunk * chunks.w);
    // FastDct's rows are padded to whole strips.
    const auto padded_size = static_cast<std::size_t>(chunks.h * FastDct::padded(chunks.per_chunk * chunks.w));
    // Always a parallel region, even for one chunk: see `product`.
#pragma omp parallel
    {
      // Kept by each thread from call to call (grown, never shrunk): fresh buffers of this size
      // cost page faults and zeroing on every call, a fifth of a 64 x 64 block encode.
      thread_local ChunkScratch scratch;
      thread_local std::vector<float> local;
      grow(scratch.a, padded_size);
      grow(scratch.y, padded_size);
      if (fast_h) grow(scratch.lanes, static_cast<std::size_t>(fast_h->scratch_floats(chunks.per_chunk * chunks.w)));
      if (with_local) grow(local, size);
#pragma omp for schedule(static)
      for (std::int64_t chunk = 0; chunk < chunks.count(); ++chunk) body(chunk, scratch, local.data());
    }
  }
  std::int64_t first_block(std::int64_t chunk) const {
    return chunks.coefficient_offset(chunk) / (chunks.h * chunks.w);
  }
};

// One chunk of the encode (a function of its own so that its loops get SIMD clones); qc: where
// the chunk's coefficients go (its blocks, consecutive).
LOWCOMM_SIMD_CLONES
void encode_chunk(const ChunkedTransform& t, std::span<const float> x, float* qc, std::int64_t chunk,
                  ChunkScratch& s) {
  const Chunks& chunks = t.chunks;
  const HalfBasis* hh = t.hh.get();
  const HalfBasis* hw = t.hw.get();
  const std::int64_t h = chunks.h, w = chunks.w, cols = chunks.cols;
  const std::int64_t nb = chunks.blocks(chunk);
  const std::int64_t n = nb * w;
  const float* xc = x.data() + chunks.tensor_offset(chunk);
  std::vector<float>& a = s.a;
  std::vector<float>& y = s.y;
  // Stage h: Y = C_h · X (h × n), its rows as h_row says.
  const float* stage_h = xc;
  std::int64_t stage_h_stride = cols;
  if (h > 1) {
    if (t.fast_h) {
      stage_h_stride = FastDct::padded(n);
      t.fast_h->forward(xc, cols, y.data(), stage_h_stride, n, s.lanes.data());
    } else {
      stage_h_stride = n;
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
      product(false, false, hh->no, n, hh->no, hh->odd.data(), hh->no, &a[hh->ne * n], n, &y[hh->ne * n], n);
    }
    stage_h = y.data();
  }
  // Stage w: each block's row i (w values) becomes coefficient row b·h + i.
  if (w == 1) {
    for (std::int64_t b = 0; b < nb; ++b) {
      for (std::int64_t i = 0; i < h; ++i) qc[b * h + i] = stage_h[t.h_row(i) * stage_h_stride + b];
    }
    return;
  }
  for (std::int64_t b = 0; b < nb; ++b) {
    for (std::int64_t i = 0; i < h; ++i) {
      split(stage_h + t.h_row(i) * stage_h_stride + b * w, w, hw->ne, &a[(b * h + i) * w]);
    }
  }
  // Q[:, 2m] = E · evenᵀ, Q[:, 2m+1] = O · oddᵀ: the products fill [even | odd] columns of
  // z, which are then interleaved into the coefficients. (The first stage's result is no
  // longer needed, so z reuses its buffer.)
  const std::int64_t rows = nb * h;
  float* z = y.data();
  product(false, true, rows, hw->ne, hw->ne, a.data(), w, hw->even.data(), hw->ne, z, w);
  product(false, true, rows, hw->no, hw->no, &a[hw->ne], w, hw->odd.data(), hw->no, z + hw->ne, w);
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

void encode_products(const BlockLayout& l, std::span<const float> x, std::span<float> q) {
  const ChunkedTransform t(l);
  t.for_each_chunk(false, [&](std::int64_t chunk, ChunkScratch& s, float*) {
    encode_chunk(t, x, q.data() + t.chunks.coefficient_offset(chunk), chunk, s);
  });
}

// One chunk of the decode (a function of its own so that its loops get SIMD clones); qc: the
// chunk's coefficients (its blocks, consecutive).
LOWCOMM_SIMD_CLONES
void decode_chunk(const ChunkedTransform& t, const float* qc, std::span<float> x, std::int64_t chunk,
                  ChunkScratch& s) {
  const Chunks& chunks = t.chunks;
  const HalfBasis* hh = t.hh.get();
  const HalfBasis* hw = t.hw.get();
  const std::int64_t h = chunks.h, w = chunks.w, cols = chunks.cols;
  const std::int64_t nb = chunks.blocks(chunk);
  const std::int64_t n = nb * w;
  float* xc = x.data() + chunks.tensor_offset(chunk);
  std::vector<float>& a = s.a;
  std::vector<float>& y = s.y;
  // Stage w, into G (h × n, tensor column order, rows as h_row says, g_stride apart): the tensor
  // itself when h = 1.
  float* g = h > 1 ? a.data() : xc;
  const std::int64_t g_stride = t.fast_h ? FastDct::padded(n) : n;
  const std::int64_t rows = nb * h;
  if (w == 1) {
    for (std::int64_t b = 0; b < nb; ++b) {
      for (std::int64_t i = 0; i < h; ++i) g[t.h_row(i) * g_stride + b] = qc[b * h + i];
    }
  } else if (t.sum_w && count_nonzero(qc, rows * w) * kRowSumSparsity <= rows * w) {
    // Row (b, i) of G = Σ_j Q[b·h+i][j] · C_w[j], in the order of j: a zero term adds nothing
    // to a sum that starts at +0, so skipping zeros changes no bit.
    const float* cw = t.sum_w->c.data();
    for (std::int64_t b = 0; b < nb; ++b) {
      for (std::int64_t i = 0; i < h; ++i) {
        const float* in = qc + (b * h + i) * w;
        float* out = g + t.h_row(i) * g_stride + b * w;
        std::fill(out, out + w, 0.0f);
        // Most runs of 16 coefficients are all zeros (±0): one vectorised test skips them.
        for (std::int64_t first = 0; first < w; first += 16) {
          const std::int64_t end = std::min(w, first + 16);
          std::uint32_t bits = 0;
          for (std::int64_t j = first; j < end; ++j) bits |= std::bit_cast<std::uint32_t>(in[j]) << 1;
          if (bits == 0) continue;
          for (std::int64_t j = first; j < end; ++j) {
            if (in[j] != 0.0f) add_scaled(out, in[j], cw + j * w, w);
          }
        }
      }
    }
  } else {
    // Coefficient rows (nb·h of w) to [even columns | odd columns] ...
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
    product(false, false, rows, hw->no, hw->no, &a[hw->ne], w, hw->odd.data(), hw->no, &y[hw->ne], w);
    // ... and x = join(e, o), each block row to its place in G.
    for (std::int64_t b = 0; b < nb; ++b) {
      for (std::int64_t i = 0; i < h; ++i) {
        const float* in = &y[(b * h + i) * w];
        join(in, in + hw->ne, w, g + t.h_row(i) * g_stride + b * w);
      }
    }
  }
  if (h == 1) return;
  if (t.fast_h) {
    // FastDct reads G's rows to the padded width: the padding holds zeros, not stale values.
    for (std::int64_t r = 0; r < h; ++r) std::fill(g + r * g_stride + n, g + (r + 1) * g_stride, 0.0f);
    t.fast_h->inverse(g, g_stride, xc, cols, n, s.lanes.data());
    return;
  }
  // Stage h: e = evenᵀ · G_even, o = oddᵀ · G_odd, x = join(e, o) row by row.
  product(true, false, hh->ne, n, hh->ne, hh->even.data(), hh->ne, a.data(), n, y.data(), n);
  product(true, false, hh->no, n, hh->no, hh->odd.data(), hh->no, &a[hh->ne * n], n, &y[hh->ne * n], n);
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
  t.for_each_chunk(false, [&](std::int64_t chunk, ChunkScratch& s, float*) {
    decode_chunk(t, q.data() + t.chunks.coefficient_offset(chunk), x, chunk, s);
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
  t.for_each_chunk(true, [&](std::int64_t chunk, ChunkScratch& s, float* local) {
    encode_chunk(t, x, local, chunk, s);
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
  t.for_each_chunk(true, [&](std::int64_t chunk, ChunkScratch& s, float* local) {
    produce(t.first_block(chunk), t.chunks.blocks(chunk), local);
    decode_chunk(t, local, x, chunk, s);
  });
}

}  // namespace lowcomm::kernels::cpu_backend
