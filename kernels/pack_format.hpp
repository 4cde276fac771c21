#pragma once
// pack.hpp's index format on the host, shared by the dispatch (its error messages), the
// Reference and the Cpu backend.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>

namespace lowcomm::kernels::detail {

// The largest index a width holds; I64 keeps the sign bit clear so indices stay int64.
inline std::uint64_t max_index(std::size_t bytes) {
  return bytes == 8 ? static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())
                    : (std::uint64_t{1} << (8 * bytes)) - 1;
}

inline bool fits(std::int64_t index, std::uint64_t max) {
  return index >= 0 && static_cast<std::uint64_t>(index) <= max;
}

inline bool valid(std::uint64_t index, std::uint64_t limit, std::uint64_t max) {
  return index < limit && index <= max;
}

// The little-endian index of `bytes` bytes at `in`, one byte at a time.
inline std::uint64_t load_reference(const std::byte* in, std::size_t bytes) {
  std::uint64_t value = 0;
  for (std::size_t b = 0; b < bytes; ++b) {
    value |= static_cast<std::uint64_t>(in[b]) << (8 * b);
  }
  return value;
}

// 12-bit indices hold [0, 4096).
inline constexpr std::int64_t kPacked12Limit = 4096;

// Index i of a 12-bit payload (pack.hpp's layout), read bit by bit from its three-byte pair.
inline std::uint64_t load_12bit(std::span<const std::byte> in, std::size_t i) {
  const std::size_t pair = i / 2;
  const auto b0 = std::to_integer<std::uint64_t>(in[3 * pair]);
  const auto b1 = std::to_integer<std::uint64_t>(in[3 * pair + 1]);
  const auto b2 = std::to_integer<std::uint64_t>(in[3 * pair + 2]);
  return i % 2 == 0 ? b0 | (b1 & 0x0F) << 8 : (b1 >> 4) | b2 << 4;
}

// Code i of a payload of `bits`-bit codes, least significant bit first, read bit by bit.
inline unsigned load_code(std::span<const std::byte> in, int bits, std::size_t i) {
  unsigned code = 0;
  for (int bit = 0; bit < bits; ++bit) {
    const std::size_t at = i * static_cast<std::size_t>(bits) + static_cast<std::size_t>(bit);
    code |= ((std::to_integer<unsigned>(in[at / 8]) >> (at % 8)) & 1u) << bit;
  }
  return code;
}

}  // namespace lowcomm::kernels::detail
