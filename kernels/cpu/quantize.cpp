// b-bit quantisation with one scale per group (include/lowcomm/kernels/quantize.hpp documents
// the scheme). Both backends share the per-element arithmetic (scale_of_*, encode, decode), so
// they agree bitwise; they differ in how the work is laid out. Reference computes each group's
// scale, then sets the code stream one bit at a time. Cpu computes the scales in parallel over
// groups, then encodes in units of eight elements: eight b-bit codes fill exactly b bytes, so
// units start on byte boundaries and threads never share a byte. For 8 and 4 bits with nearest
// rounding, whose codes are whole bytes and nibbles, Cpu instead runs vectorised loops over each
// group's run of elements (the byte-aligned paths below).
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "lowcomm/core/splitmix.hpp"
#include "lowcomm/core/simd_clones.hpp"
#include "lowcomm/error.hpp"
#if LOWCOMM_HAVE_KOKKOS
#include "../kokkos/kokkos_backend.hpp"
#endif
#if LOWCOMM_HAVE_CUDA
#include "../cuda/cuda_backend.hpp"
#endif
#include "lowcomm/kernels/quantize.hpp"

namespace lowcomm::kernels {
namespace {

// Below this many elements starting threads costs more than the work saves.
constexpr std::size_t kParallelMin = std::size_t{1} << 14;

// Sizes shared by quantize and dequantize, checked once.
struct Layout {
  std::size_t count;
  std::size_t group;
  std::size_t groups;
  int bits;
  int levels;  // L = 2^(bits−1) − 1 (0 for one bit, where codes are signs)
};

void check_bits(std::string_view kernel, int bits) {
  if (bits < 1 || bits > 8) {
    throw Error(fmt::format("{}: bits must be in 1..8, got {}", kernel, bits));
  }
}

std::size_t group_count(std::size_t count, std::size_t group) {
  return count / group + (count % group != 0);
}

Layout check_layout(std::string_view kernel, std::size_t count, std::size_t group, int bits,
                    std::size_t code_bytes, std::size_t scale_count) {
  check_bits(kernel, bits);
  if (group == 0) throw Error(fmt::format("{}: group must be at least 1", kernel));
  const std::size_t want_bytes = quantized_bytes(count, bits);
  if (code_bytes != want_bytes) {
    throw Error(fmt::format("{}: code buffer holds {} bytes, {} elements of {} bits need exactly "
                            "{}", kernel, code_bytes, count, bits, want_bytes));
  }
  const std::size_t groups = group_count(count, group);
  if (scale_count != groups) {
    throw Error(fmt::format("{}: {} scales given, {} elements in groups of {} need exactly {}",
                            kernel, scale_count, count, group, groups));
  }
  return {count, group, groups, bits, (1 << (bits - 1)) - 1};
}

bool finite(float v) { return std::fabs(v) <= std::numeric_limits<float>::max(); }

// Called once a group starting at `begin` is known to hold a non-finite element.
[[noreturn]] void throw_non_finite(std::span<const float> x, std::size_t begin) {
  std::size_t i = begin;
  while (finite(x[i])) ++i;
  throw Error(fmt::format("quantize: element {} is {}; refusing to encode a non-finite value", i,
                          x[i]));
}

// Scale of a group for bits ≥ 2: max |x| / L; `bad` records a non-finite element for the caller
// to locate. The maximum is taken on the bits of |x|, which order like the magnitudes (any
// larger than the largest float's are inf or NaN): an integer reduction, exact in any order,
// which vectorises where a float max with NaN semantics does not.
LOWCOMM_SIMD_CLONES
float scale_of_max(const float* x, std::size_t len, int levels, bool& bad) {
  constexpr std::uint32_t kLargestFinite = 0x7F7FFFFFu;
  std::uint32_t max = 0;
  for (std::size_t i = 0; i < len; ++i) max = std::max(max, std::bit_cast<std::uint32_t>(x[i]) & 0x7FFFFFFFu);
  bad = max > kLargestFinite;
  return std::bit_cast<float>(max) / static_cast<float>(levels);
}

// Scale of a group for one bit: mean |x|, summed in double in index order so that it is the same
// number in both backends (a vectorised sum would reassociate).
float scale_of_mean(const float* x, std::size_t len, bool& bad) {
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

float scale_of(const Layout& layout, const float* x, std::size_t len, bool& bad) {
  return layout.bits == 1 ? scale_of_mean(x, len, bad) : scale_of_max(x, len, layout.levels, bad);
}

// The i-th uniform of a SplitMix64 stream seeded with `seed`, from the top 24 bits of its
// output, so that it is exactly representable in float and strictly below 1.
double uniform(std::uint64_t seed, std::size_t index) {
  return static_cast<double>(splitmix64_at(seed, index) >> 40) * 0x1.0p-24;
}

unsigned encode(float x, float scale, const Layout& layout, Rounding rounding,
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

float decode(unsigned code, float scale, const Layout& layout) {
  if (layout.bits == 1) return code != 0 ? -scale : scale;
  return static_cast<float>(static_cast<int>(code) - layout.levels) * scale;
}

void quantize_reference(const Layout& layout, std::span<const float> x, Rounding rounding,
                        std::uint64_t seed, std::span<std::byte> codes, std::span<float> scales) {
  for (std::size_t g = 0; g < layout.groups; ++g) {
    const std::size_t begin = g * layout.group;
    const std::size_t len = std::min(layout.group, layout.count - begin);
    bool bad = false;
    scales[g] = scale_of(layout, &x[begin], len, bad);
    if (bad) throw_non_finite(x, begin);
  }
  std::fill(codes.begin(), codes.end(), std::byte{0});
  for (std::size_t i = 0; i < layout.count; ++i) {
    const unsigned code = encode(x[i], scales[i / layout.group], layout, rounding, seed, i);
    for (int j = 0; j < layout.bits; ++j) {
      const std::size_t bit = i * layout.bits + j;
      if ((code >> j) & 1u) codes[bit / 8] |= static_cast<std::byte>(1u << (bit % 8));
    }
  }
}

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

void quantize_cpu(const Layout& layout, std::span<const float> x, Rounding rounding,
                  std::uint64_t seed, std::span<std::byte> codes, std::span<float> scales) {
  const float* src = x.data();
  float* scale_out = scales.data();
  // Threads record the smallest failing group, so the error names the same element as
  // Reference's sequential scan.
  std::size_t first_bad = layout.groups;
#pragma omp parallel for schedule(static) reduction(min : first_bad) \
    if (layout.count >= kParallelMin && layout.groups > 1)
  for (std::size_t g = 0; g < layout.groups; ++g) {
    const std::size_t begin = g * layout.group;
    bool bad = false;
    scale_out[g] = scale_of(layout, src + begin, std::min(layout.group, layout.count - begin), bad);
    if (bad) first_bad = std::min(first_bad, g);
  }
  if (first_bad < layout.groups) throw_non_finite(x, first_bad * layout.group);
  if (aligned(layout.bits) && rounding == Rounding::Nearest) {
    return encode_aligned(layout, src, scale_out, codes.data());
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
      const std::uint64_t code = encode(src[i], scale_out[g], layout, rounding, seed, i);
      packed |= code << ((i - begin) * layout.bits);
    }
    const std::size_t used_bits = (end - begin) * layout.bits;
    const std::size_t unit_bytes = used_bits / 8 + (used_bits % 8 != 0);
    for (std::size_t b = 0; b < unit_bytes; ++b) {
      dst[u * layout.bits + b] = static_cast<std::byte>(packed >> (8 * b));
    }
  }
}

void check_scales(std::span<const float> scales) {
  for (std::size_t g = 0; g < scales.size(); ++g) {
    if (!finite(scales[g]) || scales[g] < 0.0f) {
      throw Error(fmt::format("dequantize: malformed payload: scale {} of group {} is not a "
                              "finite value ≥ 0", scales[g], g));
    }
  }
}

void check_padding(const Layout& layout, std::span<const std::byte> codes) {
  const std::size_t used = (layout.count * layout.bits) % 8;
  if (used == 0) return;
  const auto last = std::to_integer<unsigned>(codes.back());
  if ((last >> used) != 0) {
    throw Error(fmt::format("dequantize: malformed payload: padding bits of the last byte are set "
                            "(byte 0x{:02x}, {} of its bits used)", last, used));
  }
}

bool valid_code(unsigned code, const Layout& layout) {
  return layout.bits == 1 || code <= 2u * static_cast<unsigned>(layout.levels);
}

[[noreturn]] void throw_bad_code(std::size_t index, unsigned code, const Layout& layout) {
  throw Error(fmt::format("dequantize: malformed payload: code {} of element {} exceeds {} "
                          "(the largest {}-bit code)", code, index, 2 * layout.levels,
                          layout.bits));
}

unsigned read_code_reference(std::span<const std::byte> codes, std::size_t index, int bits) {
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

void dequantize_reference(const Layout& layout, std::span<const std::byte> codes,
                          std::span<const float> scales, SumStep step, std::span<float> out) {
  for (std::size_t i = 0; i < layout.count; ++i) {
    const unsigned code = read_code_reference(codes, i, layout.bits);
    if (!valid_code(code, layout)) throw_bad_code(i, code, layout);
    out[i] = step.apply(out[i], decode(code, scales[i / layout.group], layout));
  }
}

// The decode of a run of byte-aligned codes under one scale; false if a code exceeds 2L.
// (One loop per kind of step, so that each vectorises.)
LOWCOMM_SIMD_CLONES
bool decode_codes(const std::uint8_t* codes, std::size_t n, float scale, int levels, SumStep step, float* out) {
  const auto largest = static_cast<std::uint8_t>(2 * levels);
  bool valid = true;
  const float divisor = step.divisor;
  if (!step.sum) {
    for (std::size_t i = 0; i < n; ++i) {
      valid &= codes[i] <= largest;
      out[i] = static_cast<float>(static_cast<int>(codes[i]) - levels) * scale;
    }
  } else if (step.first && divisor == 1.0f) {  // x / 1 is x: the division can go
    for (std::size_t i = 0; i < n; ++i) {
      valid &= codes[i] <= largest;
      out[i] = 0.0f + static_cast<float>(static_cast<int>(codes[i]) - levels) * scale;
    }
  } else if (step.first) {
    for (std::size_t i = 0; i < n; ++i) {
      valid &= codes[i] <= largest;
      out[i] = (0.0f + static_cast<float>(static_cast<int>(codes[i]) - levels) * scale) / divisor;
    }
  } else if (divisor == 1.0f) {
    for (std::size_t i = 0; i < n; ++i) {
      valid &= codes[i] <= largest;
      out[i] = out[i] + static_cast<float>(static_cast<int>(codes[i]) - levels) * scale;
    }
  } else {
    for (std::size_t i = 0; i < n; ++i) {
      valid &= codes[i] <= largest;
      out[i] = (out[i] + static_cast<float>(static_cast<int>(codes[i]) - levels) * scale) / divisor;
    }
  }
  return valid;
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
            return !valid_code(c, layout);
          });
          first_bad = std::min(first_bad, begin + static_cast<std::size_t>(bad - codes));
        }
        i = stop;
      }
    }
  }
  return first_bad;
}

void dequantize_cpu(const Layout& layout, std::span<const std::byte> codes,
                    std::span<const float> scales, SumStep step, std::span<float> out) {
  const std::byte* src = codes.data();
  const float* scale_in = scales.data();
  float* dst = out.data();
  if (aligned(layout.bits)) {
    const std::size_t first_bad = decode_aligned(layout, src, scale_in, step, dst);
    if (first_bad < layout.count) {
      throw_bad_code(first_bad, read_code_reference(codes, first_bad, layout.bits), layout);
    }
    return;
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
      if (!valid_code(code, layout)) first_bad = std::min(first_bad, i);
      dst[i] = step.apply(dst[i], decode(code, scale_in[g], layout));
    }
  }
  if (first_bad < layout.count) {
    throw_bad_code(first_bad, read_code_reference(codes, first_bad, layout.bits), layout);
  }
}

}  // namespace

std::size_t quantized_bytes(std::size_t count, int bits) {
  check_bits("quantized_bytes", bits);
  const auto b = static_cast<std::size_t>(bits);
  if (count > std::numeric_limits<std::size_t>::max() / b) {
    throw Error(fmt::format("quantized_bytes: {} elements of {} bits overflow size_t", count,
                            bits));
  }
  return count / 8 * b + ((count % 8) * b + 7) / 8;
}

void quantize(Backend backend, std::span<const float> x, std::size_t group, int bits,
              Rounding rounding, std::uint64_t seed, std::span<std::byte> codes,
              std::span<float> scales) {
  const Layout layout = check_layout("quantize", x.size(), group, bits, codes.size(),
                                     scales.size());
  if (bits == 1 && rounding == Rounding::Stochastic) {
    throw Error("quantize: stochastic rounding is not defined for bits = 1 (the code is the "
                "sign); use Rounding::Nearest");
  }
  switch (backend) {
    case Backend::Reference: return quantize_reference(layout, x, rounding, seed, codes, scales);
    case Backend::Cpu: return quantize_cpu(layout, x, rounding, seed, codes, scales);
    case Backend::Kokkos:
#if LOWCOMM_HAVE_KOKKOS
      if (const std::size_t bad = kokkos_backend::quantize(x, group, bits, layout.levels, rounding == Rounding::Stochastic,
                                                           seed, codes, scales);
          bad < x.size()) {
        throw_non_finite(x, bad);
      }
      return;
#endif
      break;
    case Backend::Cuda:
#if LOWCOMM_HAVE_CUDA
      if (const std::size_t bad = cuda_backend::quantize(x, group, bits, layout.levels, rounding == Rounding::Stochastic,
                                                         seed, codes, scales);
          bad < x.size()) {
        throw_non_finite(x, bad);
      }
      return;
#endif
      break;
  }
  unsupported("quantize", backend);
}

namespace {

void dequantize_step(std::string_view kernel, Backend backend, std::span<const std::byte> codes,
                     std::span<const float> scales, std::size_t group, int bits, SumStep step,
                     std::span<float> out) {
  const Layout layout = check_layout(kernel, out.size(), group, bits, codes.size(), scales.size());
  check_scales(scales);
  check_padding(layout, codes);
  switch (backend) {
    case Backend::Reference: return dequantize_reference(layout, codes, scales, step, out);
    case Backend::Cpu: return dequantize_cpu(layout, codes, scales, step, out);
    case Backend::Kokkos:
#if LOWCOMM_HAVE_KOKKOS
      if (const std::size_t bad = kokkos_backend::dequantize(codes, scales, group, bits, layout.levels, step.sum,
                                                             step.first, step.divisor, out);
          bad < out.size()) {
        throw_bad_code(bad, read_code_reference(codes, bad, layout.bits), layout);
      }
      return;
#endif
      break;
    case Backend::Cuda:
#if LOWCOMM_HAVE_CUDA
      if (const std::size_t bad = cuda_backend::dequantize(codes, scales, group, bits, layout.levels, step.sum,
                                                           step.first, step.divisor, out);
          bad < out.size()) {
        throw_bad_code(bad, read_code_reference(codes, bad, layout.bits), layout);
      }
      return;
#endif
      break;
  }
  unsupported(kernel, backend);
}

}  // namespace

void dequantize(Backend backend, std::span<const std::byte> codes, std::span<const float> scales,
                std::size_t group, int bits, std::span<float> out) {
  dequantize_step("dequantize", backend, codes, scales, group, bits, SumStep{}, out);
}

void dequantize_sum(Backend backend, std::span<const std::byte> codes, std::span<const float> scales,
                    std::size_t group, int bits, bool first, float divisor, std::span<float> sum) {
  if (!(divisor > 0.0f) || !std::isfinite(divisor)) {
    throw Error(fmt::format("dequantize_sum: divisor {} must be a positive finite number", divisor));
  }
  dequantize_step("dequantize_sum", backend, codes, scales, group, bits,
                  SumStep{.sum = true, .first = first, .divisor = divisor}, sum);
}

}  // namespace lowcomm::kernels
