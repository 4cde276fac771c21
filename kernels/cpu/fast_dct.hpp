#pragma once
// A fast orthonormal DCT-II of length n, and its inverse (the DCT-III), applied to many vectors
// at once for the Cpu backend's block DCT (dct.cpp). The vectors are "lanes": row r of an input
// is one entry of each vector, consecutive in memory, so every step of the algorithm is a loop
// over a row that vectorises whatever n is.
//
// Lee's recursion (B. G. Lee, "A new algorithm to compute the discrete cosine transform", IEEE
// Trans. ASSP 32(6), 1984). For the unnormalised transform X[k] = Σ_i x[i] cos(π(2i+1)k / 2n)
// and even n = 2m:
//   a[i] = x[i] + x[n-1-i],  b[i] = (x[i] - x[n-1-i]) / (2 cos(π(2i+1) / 2n))   (i < m)
//   X[2k] = A[k],  X[2k+1] = B[k] + B[k+1]   (B[m] = 0)
// with A and B the length-m transforms of a and b; an odd length ends the recursion with its
// dense basis. The inverse runs the same graph transposed. A 64-point transform costs 6 levels of
// a few row operations instead of the 32 multiply-adds per element of the even/odd split dense
// basis. The orthonormal scale is folded into level 0.
//
// Level 0 runs over whole rows, so the caller's input (forward) or output (inverse) is read or
// written row after row, as the prefetchers like; the levels below run on strips of kStrip lanes,
// whose intermediates stay in the first-level cache (or in registers, for the lengths up to 32
// that are unrolled).
//
// Float error, measured on uniform random inputs: within 25 eps · (RMS + |exact|) of the
// transform in double for every handled length up to 64, and a forward-inverse round trip within
// 51 eps · RMS. The result depends on n and the input only, not on the lane count or which strip
// a lane falls in, so it is bitwise the same at every thread count.
#include <cstdint>
#include <vector>

namespace lowcomm::kernels::cpu_backend {

class FastDct {
 public:
  // Lanes done together below level 0: a row is two AVX-512 vectors, and a strip's scratch
  // (3·n rows, 24 KiB at n = 64) stays in the first-level cache.
  static constexpr std::int64_t kStrip = 32;
  // The longest odd part of a handled length: the dense transform that ends the recursion costs
  // that many multiply-adds per element.
  static constexpr std::int64_t kMaxOddPart = 15;
  // The longest handled length, as far as the error bound below was measured (DeMo's blocks are
  // at most 64 unless a chunk is configured longer); longer blocks keep the dense basis.
  static constexpr std::int64_t kMaxLength = 64;

  // Whether this class transforms length n: 1, or even with an odd part of at most kMaxOddPart,
  // up to kMaxLength.
  static bool handles(std::int64_t n);
  // The lane count rounded up to whole strips: what an input row of `inverse` must hold and an
  // output row of `forward` may be written to (see there).
  static std::int64_t padded(std::int64_t lanes) { return (lanes + kStrip - 1) / kStrip * kStrip; }

  explicit FastDct(std::int64_t n);  // throws lowcomm::Error unless handles(n)
  std::int64_t length() const { return n_; }
  // Floats of scratch forward and inverse need for `lanes` lanes.
  std::int64_t scratch_floats(std::int64_t lanes) const { return n_ * padded(lanes) + 3 * n_ * kStrip; }

  // out row k = Σ_i C[k][i] · (in row i) for C = dct_basis(n): row r of `in` is the `lanes`
  // floats at in + r·in_stride. Rows of `out` are written up to padded(lanes) floats (the
  // padding lanes hold no result). in, out and the scratch must not overlap.
  void forward(const float* in, std::int64_t in_stride, float* out, std::int64_t out_stride, std::int64_t lanes,
               float* scratch) const;
  // out row i = Σ_k C[k][i] · (in row k): the inverse. Rows of `in` are read up to padded(lanes)
  // floats (the padding lanes are ignored, though read); rows of `out` are written to `lanes`.
  void inverse(const float* in, std::int64_t in_stride, float* out, std::int64_t out_stride, std::int64_t lanes,
               float* scratch) const;

  // One level of the recursion (public for the kernels in fast_dct.cpp).
  struct Level {
    std::int64_t n = 0;
    std::vector<float> factors;  // even n: 1 / (2 cos(π(2i+1) / 2n)), i < n/2
    std::vector<float> basis;    // odd n: the unnormalised basis cos(π(2i+1)k / 2n), row k
  };

 private:
  std::int64_t n_;
  float scale_;                     // √(2/n): the orthonormal scale of every row but the first
  std::vector<float> top_factors_;  // level 0's factors times scale_
  std::vector<Level> levels_;       // levels_[0] has length n, each next one half the last
};

}  // namespace lowcomm::kernels::cpu_backend
