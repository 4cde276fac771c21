// b-bit quantisation with one scale per group (quantize.hpp documents the scheme) on the Cpu
// backend. The per-element arithmetic (scale_of_*, encode, decode: ../quantize_format.hpp) is the
// Reference's, so the two agree bitwise; they differ in how the work is laid out. Cpu computes
// the scales in parallel over groups, then encodes in units of eight elements: eight b-bit codes
// fill exactly b bytes, so units start on byte boundaries and threads never share a byte. For 8
// and 4 bits with nearest rounding, whose codes are whole bytes and nibbles, Cpu instead runs
// vectorised loops over each group's run of elements (the byte-aligned paths below).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "../backend_kernels.hpp"
#include "../elementwise_rules.hpp"
#include "../quantize_format.hpp"
#include "lowcomm/core/simd_clones.hpp"

namespace lowcomm::kernels::cpu_backend {
namespace {

using detail::Layout;
using detail::SumStep;

// Below this many elements starting threads costs more than the work saves.
constexpr std::size_t kParallelMin = std::size_t{1} << 14;

// ---- Cpu, byte-aligned codes: 8 bits (a byte per element) and 4 bits (two per byte, the even
// element in the low nibble), nearest rounding ------------------------------------------------
//
// The codes of a run of elements under one scale, computed for the whole run at once so that the
// loop vectorises (SIMD clones): round half away from zero as trunc(y) plus one step away from
// zero where |y − trunc(y)| ≥ 0.5 (y − trunc(y) is exact in float), which is std::round's value;
// the clamp in float, which is exact on these integers. Bitwise the reference's encode().
LOWCOMM_SIMD_CLONES
void nearest_codes(const float* x, std::size_t n, float scale, int levels, std::uint8_t* codes) {
  if (scale == 0.0f) {  // an all-zero group
    std::fill(codes, codes + n, static_cast<std::uint8_t>(levels));
    return;
  }
  const auto limit = static_cast<float>(levels);
  for (std::size_t i = 0; i < n; ++i) {
    const float y = x[i] / scale;
    const float whole = std::trunc(y);
    const auto away = static_cast<float>(std::fabs(y - whole) >= 0.5f);  // 0 or 1, branch-free
    const float q = std::min(std::max(whole + std::copysign(away, y), -limit), limit);
    codes[i] = static_cast<std::uint8_t>(static_cast<int>(q) + levels);
  }
}

// codes[i] for i in [begin, end) of the whole tensor, group by group.
void nearest_codes_range(const Layout& layout, const float* x, const float* scales, std::size_t begin,
                         std::size_t end, std::uint8_t* codes) {
  for (std::size_t i = begin; i < end;) {
    const std::size_t g = i / layout.group;
    const std::size_t stop = std::min(end, (g + 1) * layout.group);
    nearest_codes(x + i, stop - i, scales[g], layout.levels, codes + (i - begin));
    i = stop;
  }
}

// Elements per parallel piece: even, so a 4-bit piece starts on a byte.
constexpr std::size_t kAlignedPiece = std::size_t{1} << 14;

LOWCOMM_SIMD_CLONES
void pack_nibbles(const std::uint8_t* codes, std::size_t n, std::byte* out) {
  for (std::size_t j = 0; j < n / 2; ++j) {
    out[j] = static_cast<std::byte>(codes[2 * j] | (codes[2 * j + 1] << 4));
  }
  if (n % 2 == 1) out[n / 2] = static_cast<std::byte>(codes[n - 1]);
}

void encode_aligned(const Layout& layout, const float* x, const float* scales, std::byte* out) {
  const std::size_t pieces = (layout.count + kAlignedPiece - 1) / kAlignedPiece;
#pragma omp parallel if (layout.count >= kParallelMin)
  {
    std::vector<std::uint8_t> codes(layout.bits == 4 ? kAlignedPiece : 0);
#pragma omp for schedule(static)
    for (std::size_t p = 0; p < pieces; ++p) {
      const std::size_t begin = p * kAlignedPiece;
      const std::size_t end = std::min(begin + kAlignedPiece, layout.count);
      if (layout.bits == 8) {
        nearest_codes_range(layout, x, scales, begin, end, reinterpret_cast<std::uint8_t*>(out) + begin);
      } else {
        nearest_codes_range(layout, x, scales, begin, end, codes.data());
        pack_nibbles(codes.data(), end - begin, out + begin / 2);
      }
    }
  }
}

bool aligned(int bits) { return bits == 8 || bits == 4; }

// The decode of a run of byte-aligned codes under one scale; false if a code exceeds 2L.
// (One loop per kind of step, so that each vectorises; the check is a running maximum of the
// codes, which vectorises where a running `valid &= ...` does not.)
LOWCOMM_SIMD_CLONES
bool decode_codes(const std::uint8_t* codes, std::size_t n, float scale, int levels, SumStep step, float* out) {
  std::uint8_t largest_code = 0;
  const float divisor = step.divisor;
  const auto value = [&](std::size_t i) { return static_cast<float>(static_cast<int>(codes[i]) - levels) * scale; };
  if (!step.sum) {
    for (std::size_t i = 0; i < n; ++i) {
      largest_code = std::max(largest_code, codes[i]);
      out[i] = value(i);
    }
  } else if (step.first && divisor == 1.0f) {  // x / 1 is x: the division can go
    for (std::size_t i = 0; i < n; ++i) {
      largest_code = std::max(largest_code, codes[i]);
      out[i] = 0.0f + value(i);
    }
  } else if (step.first) {
    for (std::size_t i = 0; i < n; ++i) {
      largest_code = std::max(largest_code, codes[i]);
      out[i] = (0.0f + value(i)) / divisor;
    }
  } else if (divisor == 1.0f) {
    for (std::size_t i = 0; i < n; ++i) {
      largest_code = std::max(largest_code, codes[i]);
      out[i] = out[i] + value(i);
    }
  } else {
    for (std::size_t i = 0; i < n; ++i) {
      largest_code = std::max(largest_code, codes[i]);
      out[i] = (out[i] + value(i)) / divisor;
    }
  }
  return largest_code <= 2 * levels;
}

LOWCOMM_SIMD_CLONES
void unpack_nibbles(const std::byte* in, std::size_t n, std::uint8_t* codes) {
  for (std::size_t j = 0; j < n / 2; ++j) {
    const auto byte = std::to_integer<std::uint8_t>(in[j]);
    codes[2 * j] = byte & 0x0F;
    codes[2 * j + 1] = byte >> 4;
  }
  if (n % 2 == 1) codes[n - 1] = std::to_integer<std::uint8_t>(in[n / 2]) & 0x0F;
}

// Returns the first element whose code is malformed, or layout.count.
std::size_t decode_aligned(const Layout& layout, const std::byte* in, const float* scales, SumStep step,
                           float* out) {
  const std::size_t pieces = (layout.count + kAlignedPiece - 1) / kAlignedPiece;
  std::size_t first_bad = layout.count;
#pragma omp parallel if (layout.count >= kParallelMin) reduction(min : first_bad)
  {
    std::vector<std::uint8_t> unpacked(layout.bits == 4 ? kAlignedPiece : 0);
#pragma omp for schedule(static)
    for (std::size_t p = 0; p < pieces; ++p) {
      const std::size_t begin = p * kAlignedPiece;
      const std::size_t end = std::min(begin + kAlignedPiece, layout.count);
      const std::uint8_t* codes = reinterpret_cast<const std::uint8_t*>(in) + begin;
      if (layout.bits == 4) {
        unpack_nibbles(in + begin / 2, end - begin, unpacked.data());
        codes = unpacked.data();
      }
      for (std::size_t i = begin; i < end;) {
        const std::size_t g = i / layout.group;
        const std::size_t stop = std::min(end, (g + 1) * layout.group);
        if (!decode_codes(codes + (i - begin), stop - i, scales[g], layout.levels, step, out + i)) {
          const auto* bad = std::find_if(codes + (i - begin), codes + (stop - begin), [&](std::uint8_t c) {
            return !detail::valid_code(c, layout);
          });
          first_bad = std::min(first_bad, begin + static_cast<std::size_t>(bad - codes));
        }
        i = stop;
      }
    }
  }
  return first_bad;
}

// Error feedback's correction, formed group by group in the scales' pass: corrected[i] ←
// decay·residual[i] + gradient[i] (scaled_sum: bit for bit scale_add's element), where
// `corrected` is the memory quantized. The group is then still in cache when its scale reads it.
struct Correction {
  float decay;
  const float* residual;
  const float* gradient;
  float* corrected;
};

LOWCOMM_SIMD_CLONES
void correct(float decay, const float* residual, const float* gradient, float* corrected, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) corrected[i] = scaled_sum(decay, residual[i], gradient[i]);
}

// quantize of x, which with a correction is its `corrected`, written as the scales' pass reads it.
std::size_t quantize_into(const Correction* correction, std::span<const float> x, std::size_t group, int bits,
                          int levels, bool stochastic, std::uint64_t seed, std::span<std::byte> codes,
                          std::span<float> scales) {
  const Layout layout = detail::layout_of(x.size(), group, bits, levels);
  const Rounding rounding = stochastic ? Rounding::Stochastic : Rounding::Nearest;
  const float* src = x.data();
  float* scale_out = scales.data();
  // Threads record the smallest failing group, so the error names the same element as
  // Reference's sequential scan.
  std::size_t first_bad = layout.groups;
#pragma omp parallel for schedule(static) reduction(min : first_bad) \
    if (layout.count >= kParallelMin && layout.groups > 1)
  for (std::size_t g = 0; g < layout.groups; ++g) {
    const std::size_t begin = g * layout.group;
    const std::size_t len = std::min(layout.group, layout.count - begin);
    if (correction != nullptr) {
      correct(correction->decay, correction->residual + begin, correction->gradient + begin,
              correction->corrected + begin, len);
    }
    bool bad = false;
    scale_out[g] = detail::scale_of(layout, src + begin, len, bad);
    if (bad) first_bad = std::min(first_bad, g);
  }
  if (first_bad < layout.groups) return detail::first_non_finite(x, first_bad * layout.group);
  if (aligned(layout.bits) && rounding == Rounding::Nearest) {
    encode_aligned(layout, src, scale_out, codes.data());
    return x.size();
  }

  std::byte* dst = codes.data();
  const std::size_t units = layout.count / 8 + (layout.count % 8 != 0);
#pragma omp parallel for schedule(static) if (layout.count >= kParallelMin)
  for (std::size_t u = 0; u < units; ++u) {
    const std::size_t begin = 8 * u;
    const std::size_t end = std::min(begin + 8, layout.count);
    // One division per unit; the group index then advances as the elements cross boundaries.
    std::size_t g = begin / layout.group;
    std::size_t group_end = (g + 1) * layout.group;
    std::uint64_t packed = 0;
    for (std::size_t i = begin; i < end; ++i) {
      if (i == group_end) {
        ++g;
        group_end += layout.group;
      }
      const std::uint64_t code = detail::encode(src[i], scale_out[g], layout, rounding, seed, i);
      packed |= code << ((i - begin) * layout.bits);
    }
    const std::size_t used_bits = (end - begin) * layout.bits;
    const std::size_t unit_bytes = used_bits / 8 + (used_bits % 8 != 0);
    for (std::size_t b = 0; b < unit_bytes; ++b) {
      dst[u * layout.bits + b] = static_cast<std::byte>(packed >> (8 * b));
    }
  }
  return x.size();
}

}  // namespace

std::size_t quantize(std::span<const float> x, std::size_t group, int bits, int levels, bool stochastic,
                     std::uint64_t seed, std::span<std::byte> codes, std::span<float> scales) {
  return quantize_into(nullptr, x, group, bits, levels, stochastic, seed, codes, scales);
}

std::size_t corrected_quantize(float decay, std::span<const float> residual, std::span<const float> gradient,
                               std::span<float> corrected, std::size_t group, int bits, int levels, bool stochastic,
                               std::uint64_t seed, std::span<std::byte> codes, std::span<float> scales) {
  const Correction correction{decay, residual.data(), gradient.data(), corrected.data()};
  return quantize_into(&correction, corrected, group, bits, levels, stochastic, seed, codes, scales);
}

std::size_t dequantize(std::span<const std::byte> codes, std::span<const float> scales, std::size_t group,
                       int bits, int levels, bool sum, bool first, float divisor, std::span<float> out) {
  const Layout layout = detail::layout_of(out.size(), group, bits, levels);
  const SumStep step{.sum = sum, .first = first, .divisor = divisor};
  const std::byte* src = codes.data();
  const float* scale_in = scales.data();
  float* dst = out.data();
  if (aligned(layout.bits)) {
    return decode_aligned(layout, src, scale_in, step, dst);
  }
  const std::size_t units = layout.count / 8 + (layout.count % 8 != 0);
  const std::uint64_t mask = (std::uint64_t{1} << layout.bits) - 1;
  std::size_t first_bad = layout.count;
#pragma omp parallel for schedule(static) reduction(min : first_bad) \
    if (layout.count >= kParallelMin)
  for (std::size_t u = 0; u < units; ++u) {
    const std::size_t begin = 8 * u;
    const std::size_t end = std::min(begin + 8, layout.count);
    const std::size_t used_bits = (end - begin) * layout.bits;
    const std::size_t unit_bytes = used_bits / 8 + (used_bits % 8 != 0);
    std::uint64_t packed = 0;
    for (std::size_t b = 0; b < unit_bytes; ++b) {
      packed |= static_cast<std::uint64_t>(src[u * layout.bits + b]) << (8 * b);
    }
    std::size_t g = begin / layout.group;
    std::size_t group_end = (g + 1) * layout.group;
    for (std::size_t i = begin; i < end; ++i) {
      if (i == group_end) {
        ++g;
        group_end += layout.group;
      }
      const auto code = static_cast<unsigned>((packed >> ((i - begin) * layout.bits)) & mask);
      if (!detail::valid_code(code, layout)) first_bad = std::min(first_bad, i);
      dst[i] = step.apply(dst[i], detail::decode(code, scale_in[g], layout));
    }
  }
  return first_bad;
}

}  // namespace lowcomm::kernels::cpu_backend
