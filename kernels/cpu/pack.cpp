// Index packing and 1-bit values (pack.hpp) on the Cpu backend.
//
// Indices: specialised per width (the compiler merges the byte shifts into single loads and
// stores), large arrays split over OpenMP threads.
//
// Signs: each byte built from eight sign bits read straight from the float representation (a
// loop the compiler vectorises), large arrays split over OpenMP threads, one byte per iteration
// so that no two threads write the same byte.
//
// 12-bit indices: one three-byte pair per iteration, split over OpenMP threads.
//
// Codes: at 1, 2, 4 or 8 bits, one output byte per iteration from its 8 / bits codes (a fixed
// trip count), split over OpenMP threads; at other widths (3, 5, 6, 7 bits: codes straddle bytes)
// a 64-bit accumulator streams the codes in order.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>

#include "../backend_kernels.hpp"
#include "../pack_format.hpp"

namespace lowcomm::kernels::cpu_backend {
namespace {

using detail::fits;
using detail::max_index;
using detail::valid;

// Below this many indices starting threads costs more than the copy saves.
constexpr std::size_t kIndicesParallelMin = std::size_t{1} << 16;
// Below this many output bytes starting threads costs more than the packing saves.
constexpr std::size_t kSignsParallelMin = std::size_t{1} << 13;
constexpr std::uint32_t kOne = 0x3F800000;  // the bits of 1.0f

template <std::size_t Bytes>
void store_le(std::byte* out, std::uint64_t value) {
  for (std::size_t b = 0; b < Bytes; ++b) out[b] = static_cast<std::byte>(value >> (8 * b));
}

template <std::size_t Bytes>
std::uint64_t load_le(const std::byte* in) {
  std::uint64_t value = 0;
  for (std::size_t b = 0; b < Bytes; ++b) value |= static_cast<std::uint64_t>(in[b]) << (8 * b);
  return value;
}

// Writes every index (a bad one truncated) and reports the first bad position afterwards, so the
// loop has no early exit.
template <std::size_t Bytes>
std::size_t pack_cpu(std::span<const std::int64_t> indices, std::span<std::byte> out) {
  const std::uint64_t max = max_index(Bytes);
  const std::int64_t* in = indices.data();
  std::byte* dst = out.data();
  const std::size_t n = indices.size();
  std::size_t first_bad = n;
#pragma omp parallel for schedule(static) reduction(min : first_bad) if (n >= kIndicesParallelMin)
  for (std::size_t i = 0; i < n; ++i) {
    if (!fits(in[i], max)) first_bad = std::min(first_bad, i);
    store_le<Bytes>(dst + i * Bytes, static_cast<std::uint64_t>(in[i]));
  }
  return first_bad;
}

template <std::size_t Bytes>
std::size_t unpack_cpu(std::span<const std::byte> in, std::uint64_t limit, std::span<std::int64_t> out) {
  const std::uint64_t max = max_index(Bytes);
  const std::byte* src = in.data();
  std::int64_t* dst = out.data();
  const std::size_t n = out.size();
  std::size_t first_bad = n;
#pragma omp parallel for schedule(static) reduction(min : first_bad) if (n >= kIndicesParallelMin)
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t value = load_le<Bytes>(src + i * Bytes);
    if (!valid(value, limit, max)) first_bad = std::min(first_bad, i);
    dst[i] = static_cast<std::int64_t>(value);
  }
  return first_bad;
}

constexpr std::size_t kPairsParallelMin = std::size_t{1} << 15;
constexpr std::size_t kCodeBytesParallelMin = std::size_t{1} << 14;

std::uint32_t index_or_zero(std::span<const std::int64_t> indices, std::size_t i) {
  return i < indices.size() ? static_cast<std::uint32_t>(indices[i]) : 0u;
}

// Codes whose width divides 8: output byte b holds codes [b·per, b·per + per).
template <int Bits>
std::size_t pack_codes_aligned(std::span<const std::uint8_t> codes, std::span<std::byte> out) {
  constexpr std::size_t per = 8 / Bits;
  const std::size_t n = codes.size();
  const std::size_t bytes = out.size();
  std::size_t first_bad = n;
#pragma omp parallel for schedule(static) reduction(min : first_bad) if (bytes >= kCodeBytesParallelMin)
  for (std::size_t b = 0; b < bytes; ++b) {
    unsigned byte = 0;
    const std::size_t begin = b * per;
    const std::size_t len = std::min(per, n - begin);
    for (std::size_t j = 0; j < len; ++j) {
      const unsigned code = codes[begin + j];
      if (code >> Bits != 0) first_bad = std::min(first_bad, begin + j);
      byte |= (code & ((1u << Bits) - 1u)) << (j * Bits);
    }
    out[b] = static_cast<std::byte>(byte);
  }
  return first_bad;
}

template <int Bits>
std::size_t unpack_codes_aligned(std::span<const std::byte> in, unsigned limit, std::span<std::uint8_t> out) {
  constexpr std::size_t per = 8 / Bits;
  const std::size_t n = out.size();
  const std::size_t bytes = in.size();
  std::size_t first_bad = n;
#pragma omp parallel for schedule(static) reduction(min : first_bad) if (bytes >= kCodeBytesParallelMin)
  for (std::size_t b = 0; b < bytes; ++b) {
    const auto byte = std::to_integer<unsigned>(in[b]);
    const std::size_t begin = b * per;
    const std::size_t len = std::min(per, n - begin);
    for (std::size_t j = 0; j < len; ++j) {
      const unsigned code = (byte >> (j * Bits)) & ((1u << Bits) - 1u);
      if (code >= limit) first_bad = std::min(first_bad, begin + j);
      out[begin + j] = static_cast<std::uint8_t>(code);
    }
  }
  return first_bad;
}

std::size_t pack_codes_streamed(std::span<const std::uint8_t> codes, int bits, std::span<std::byte> out) {
  std::uint64_t pending = 0;
  int held = 0;
  std::size_t at = 0, first_bad = codes.size();
  for (std::size_t i = 0; i < codes.size(); ++i) {
    if (codes[i] >> bits != 0 && first_bad == codes.size()) first_bad = i;
    pending |= static_cast<std::uint64_t>(codes[i] & ((1u << bits) - 1u)) << held;
    held += bits;
    while (held >= 8) {
      out[at++] = static_cast<std::byte>(pending & 0xFF);
      pending >>= 8;
      held -= 8;
    }
  }
  if (held > 0) out[at] = static_cast<std::byte>(pending & 0xFF);
  return first_bad;
}

std::size_t unpack_codes_streamed(std::span<const std::byte> in, int bits, unsigned limit,
                                  std::span<std::uint8_t> out) {
  std::uint64_t pending = 0;
  int held = 0;
  std::size_t at = 0, first_bad = out.size();
  for (std::size_t i = 0; i < out.size(); ++i) {
    while (held < bits) {
      pending |= std::to_integer<std::uint64_t>(in[at++]) << held;
      held += 8;
    }
    const auto code = static_cast<unsigned>(pending & ((1u << bits) - 1u));
    pending >>= bits;
    held -= bits;
    if (code >= limit && first_bad == out.size()) first_bad = i;
    out[i] = static_cast<std::uint8_t>(code);
  }
  return first_bad;
}

}  // namespace

std::size_t pack_indices(std::span<const std::int64_t> indices, std::size_t bytes, std::span<std::byte> out) {
  switch (bytes) {
    case 1: return pack_cpu<1>(indices, out);
    case 2: return pack_cpu<2>(indices, out);
    case 4: return pack_cpu<4>(indices, out);
    default: return pack_cpu<8>(indices, out);  // 8: the dispatch admits only 1, 2, 4 and 8
  }
}

std::size_t unpack_indices(std::span<const std::byte> in, std::size_t bytes, std::uint64_t limit,
                           std::span<std::int64_t> out) {
  switch (bytes) {
    case 1: return unpack_cpu<1>(in, limit, out);
    case 2: return unpack_cpu<2>(in, limit, out);
    case 4: return unpack_cpu<4>(in, limit, out);
    default: return unpack_cpu<8>(in, limit, out);  // 8: the dispatch admits only 1, 2, 4 and 8
  }
}

std::size_t pack_signs(std::span<const float> values, std::span<std::byte> out) {
  const float* src = values.data();
  std::byte* dst = out.data();
  const std::size_t n = values.size();
  const std::size_t bytes = out.size();
  std::size_t first_bad_byte = bytes;
#pragma omp parallel for schedule(static) reduction(min : first_bad_byte) if (bytes >= kSignsParallelMin)
  for (std::size_t b = 0; b < bytes; ++b) {
    const std::size_t begin = 8 * b;
    const std::size_t len = std::min<std::size_t>(8, n - begin);
    unsigned bits = 0;
    bool nan = false;
    for (std::size_t j = 0; j < len; ++j) {
      const float v = src[begin + j];
      bits |= (std::bit_cast<std::uint32_t>(v) >> 31) << j;
      nan |= v != v;
    }
    dst[b] = static_cast<std::byte>(bits);
    if (nan) first_bad_byte = std::min(first_bad_byte, b);
  }
  if (first_bad_byte < bytes) {
    std::size_t i = 8 * first_bad_byte;
    while (!std::isnan(values[i])) ++i;
    return i;
  }
  return n;
}

void unpack_signs(std::span<const std::byte> in, std::span<float> out) {
  const std::byte* src = in.data();
  float* dst = out.data();
  const std::size_t n = out.size();
  const std::size_t bytes = in.size();
#pragma omp parallel for schedule(static) if (bytes >= kSignsParallelMin)
  for (std::size_t b = 0; b < bytes; ++b) {
    const std::size_t begin = 8 * b;
    const std::size_t len = std::min<std::size_t>(8, n - begin);
    const auto bits = std::to_integer<std::uint32_t>(src[b]);
    if (len == 8) {
      // A fixed trip count and the sign bit set directly into 1.0f's pattern: vectorisable.
      for (std::size_t j = 0; j < 8; ++j) {
        dst[begin + j] = std::bit_cast<float>(kOne | (((bits >> j) & 1u) << 31));
      }
    } else {
      for (std::size_t j = 0; j < len; ++j) dst[begin + j] = ((bits >> j) & 1u) ? -1.0f : 1.0f;
    }
  }
}

std::size_t pack_12bit(std::span<const std::int64_t> indices, std::span<std::byte> out) {
  const std::size_t n = indices.size();
  const std::size_t pairs = out.size() / 3;
  std::size_t first_bad = n;
#pragma omp parallel for schedule(static) reduction(min : first_bad) if (pairs >= kPairsParallelMin)
  for (std::size_t p = 0; p < pairs; ++p) {
    for (std::size_t i = 2 * p; i < std::min(2 * p + 2, n); ++i) {
      if (!fits(indices[i], detail::kPacked12Limit - 1)) first_bad = std::min(first_bad, i);
    }
    const std::uint32_t a = index_or_zero(indices, 2 * p), b = index_or_zero(indices, 2 * p + 1);
    out[3 * p] = static_cast<std::byte>(a & 0xFF);
    out[3 * p + 1] = static_cast<std::byte>(((a >> 8) & 0x0F) | ((b & 0x0F) << 4));
    out[3 * p + 2] = static_cast<std::byte>((b >> 4) & 0xFF);
  }
  return first_bad;
}

std::size_t unpack_12bit(std::span<const std::byte> in, std::uint64_t limit, std::span<std::int64_t> out) {
  const std::size_t n = out.size();
  const std::size_t pairs = in.size() / 3;
  std::size_t first_bad = n;
#pragma omp parallel for schedule(static) reduction(min : first_bad) if (pairs >= kPairsParallelMin)
  for (std::size_t p = 0; p < pairs; ++p) {
    const auto b0 = std::to_integer<std::uint64_t>(in[3 * p]);
    const auto b1 = std::to_integer<std::uint64_t>(in[3 * p + 1]);
    const auto b2 = std::to_integer<std::uint64_t>(in[3 * p + 2]);
    const std::uint64_t a = b0 | (b1 & 0x0F) << 8, b = (b1 >> 4) | b2 << 4;
    if (a >= limit) first_bad = std::min(first_bad, 2 * p);
    out[2 * p] = static_cast<std::int64_t>(a);
    if (2 * p + 1 < n) {
      if (b >= limit) first_bad = std::min(first_bad, 2 * p + 1);
      out[2 * p + 1] = static_cast<std::int64_t>(b);
    }
  }
  return first_bad;
}

std::size_t pack_codes(std::span<const std::uint8_t> codes, int bits, std::span<std::byte> out) {
  switch (bits) {
    case 1: return pack_codes_aligned<1>(codes, out);
    case 2: return pack_codes_aligned<2>(codes, out);
    case 4: return pack_codes_aligned<4>(codes, out);
    case 8: return pack_codes_aligned<8>(codes, out);
    default: return pack_codes_streamed(codes, bits, out);
  }
}

std::size_t unpack_codes(std::span<const std::byte> in, int bits, unsigned limit, std::span<std::uint8_t> out) {
  switch (bits) {
    case 1: return unpack_codes_aligned<1>(in, limit, out);
    case 2: return unpack_codes_aligned<2>(in, limit, out);
    case 4: return unpack_codes_aligned<4>(in, limit, out);
    case 8: return unpack_codes_aligned<8>(in, limit, out);
    default: return unpack_codes_streamed(in, bits, limit, out);
  }
}

}  // namespace lowcomm::kernels::cpu_backend
