#pragma once
// quantize.hpp's per-element arithmetic on the host, shared by the dispatch (its checks and error
// messages), the Reference and the Cpu backend: both backends compute scales, codes and decoded
// values with these functions, so they agree bitwise.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>

#include "lowcomm/core/simd_clones.hpp"
#include "lowcomm/core/splitmix.hpp"
#include "lowcomm/kernels/quantize.hpp"

namespace lowcomm::kernels::detail {

inline std::size_t group_count(std::size_t count, std::size_t group) {
  return count / group + (count % group != 0);
}

// Sizes shared by quantize and dequantize, checked once (by the dispatch).
struct Layout {
  std::size_t count;
  std::size_t group;
  std::size_t groups;
  int bits;
  int levels;  // L = 2^(bits−1) − 1 (0 for one bit, where codes are signs)
};

inline Layout layout_of(std::size_t count, std::size_t group, int bits, int levels) {
  return {count, group, group_count(count, group), bits, levels};
}

inline bool finite(float v) { return std::fabs(v) <= std::numeric_limits<float>::max(); }

// Scale of a group for bits ≥ 2: max |x| / L; `bad` records a non-finite element for the caller
// to locate. The maximum is taken on the bits of |x|, which order like the magnitudes (any
// larger than the largest float's are inf or NaN): an integer reduction, exact in any order,
// which vectorises where a float max with NaN semantics does not.
LOWCOMM_SIMD_CLONES
inline float scale_of_max(const float* x, std::size_t len, int levels, bool& bad) {
  constexpr std::uint32_t kLargestFinite = 0x7F7FFFFFu;
  std::uint32_t max = 0;
  for (std::size_t i = 0; i < len; ++i) max = std::max(max, std::bit_cast<std::uint32_t>(x[i]) & 0x7FFFFFFFu);
  bad = max > kLargestFinite;
  return std::bit_cast<float>(max) / static_cast<float>(levels);
}

// Scale of a group for one bit: mean |x|, summed in double in index order so that it is the same
// number in both backends (a vectorised sum would reassociate).
inline float scale_of_mean(const float* x, std::size_t len, bool& bad) {
  double sum = 0.0;
  bool non_finite = false;
  for (std::size_t i = 0; i < len; ++i) {
    const float a = std::fabs(x[i]);
    sum += a;
    non_finite |= !(a <= std::numeric_limits<float>::max());
  }
  bad = non_finite;
  return static_cast<float>(sum / static_cast<double>(len));
}

inline float scale_of(const Layout& layout, const float* x, std::size_t len, bool& bad) {
  return layout.bits == 1 ? scale_of_mean(x, len, bad) : scale_of_max(x, len, layout.levels, bad);
}

// The first non-finite element from `begin` on, once the group starting there is known to hold one.
inline std::size_t first_non_finite(std::span<const float> x, std::size_t begin) {
  std::size_t i = begin;
  while (finite(x[i])) ++i;
  return i;
}

// The i-th uniform of a SplitMix64 stream seeded with `seed`, from the top 24 bits of its
// output, so that it is exactly representable in float and strictly below 1.
inline double uniform(std::uint64_t seed, std::size_t index) {
  return static_cast<double>(splitmix64_at(seed, index) >> 40) * 0x1.0p-24;
}

inline unsigned encode(float x, float scale, const Layout& layout, Rounding rounding,
                       std::uint64_t seed, std::size_t index) {
  if (layout.bits == 1) return std::signbit(x) ? 1u : 0u;
  if (scale == 0.0f) return static_cast<unsigned>(layout.levels);
  const float y = x / scale;
  // A subnormal scale loses precision and x / scale can exceed L, even reach inf: clamping
  // before the conversion to int keeps it defined.
  const double limit = layout.levels;
  const double q = rounding == Rounding::Nearest
                       ? static_cast<double>(std::round(y))
                       : std::floor(static_cast<double>(y) + uniform(seed, index));
  return static_cast<unsigned>(static_cast<int>(std::clamp(q, -limit, limit)) + layout.levels);
}

inline float decode(unsigned code, float scale, const Layout& layout) {
  if (layout.bits == 1) return code != 0 ? -scale : scale;
  return static_cast<float>(static_cast<int>(code) - layout.levels) * scale;
}

inline bool valid_code(unsigned code, const Layout& layout) {
  return layout.bits == 1 || code <= 2u * static_cast<unsigned>(layout.levels);
}

inline unsigned read_code_reference(std::span<const std::byte> codes, std::size_t index, int bits) {
  unsigned code = 0;
  for (int j = 0; j < bits; ++j) {
    const std::size_t bit = index * bits + j;
    code |= ((std::to_integer<unsigned>(codes[bit / 8]) >> (bit % 8)) & 1u) << j;
  }
  return code;
}

// What a decoded value does to its output element: replaces it (dequantize), or is one rank's
// step of the mean over ranks (dequantize_sum).
struct SumStep {
  bool sum = false;
  bool first = false;
  float divisor = 1.0f;
  float apply(float out, float x) const { return sum ? (first ? 0.0f + x : out + x) / divisor : x; }
};

}  // namespace lowcomm::kernels::detail
