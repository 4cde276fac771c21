// Index packing and 1-bit values (pack.hpp) on the Cpu backend.
//
// Indices: specialised per width (the compiler merges the byte shifts into single loads and
// stores), large arrays split over OpenMP threads.
//
// Signs: each byte built from eight sign bits read straight from the float representation (a
// loop the compiler vectorises), large arrays split over OpenMP threads, one byte per iteration
// so that no two threads write the same byte.
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

}  // namespace lowcomm::kernels::cpu_backend
