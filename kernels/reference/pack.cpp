// Index packing, 1-bit values and b-bit codes (pack.hpp): indices written one byte at a time for
// any width, 12-bit indices one pair at a time, signs and codes set one bit at a time.
#include <algorithm>
#include <cmath>

#include "../backend_kernels.hpp"
#include "../pack_format.hpp"

namespace lowcomm::kernels::reference_backend {

using detail::fits;
using detail::max_index;
using detail::valid;

std::size_t pack_indices(std::span<const std::int64_t> indices, std::size_t bytes, std::span<std::byte> out) {
  const std::uint64_t max = max_index(bytes);
  for (std::size_t i = 0; i < indices.size(); ++i) {
    if (!fits(indices[i], max)) return i;
    const auto value = static_cast<std::uint64_t>(indices[i]);
    for (std::size_t b = 0; b < bytes; ++b) {
      out[i * bytes + b] = static_cast<std::byte>((value >> (8 * b)) & 0xFF);
    }
  }
  return indices.size();
}

std::size_t unpack_indices(std::span<const std::byte> in, std::size_t bytes, std::uint64_t limit,
                           std::span<std::int64_t> out) {
  const std::uint64_t max = max_index(bytes);
  for (std::size_t i = 0; i < out.size(); ++i) {
    const std::uint64_t value = detail::load_reference(&in[i * bytes], bytes);
    if (!valid(value, limit, max)) return i;
    out[i] = static_cast<std::int64_t>(value);
  }
  return out.size();
}

std::size_t pack_signs(std::span<const float> values, std::span<std::byte> out) {
  std::fill(out.begin(), out.end(), std::byte{0});
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (std::isnan(values[i])) return i;
    if (std::signbit(values[i])) out[i / 8] |= static_cast<std::byte>(1u << (i % 8));
  }
  return values.size();
}

void unpack_signs(std::span<const std::byte> in, std::span<float> out) {
  for (std::size_t i = 0; i < out.size(); ++i) {
    const bool negative = ((std::to_integer<unsigned>(in[i / 8]) >> (i % 8)) & 1u) != 0;
    out[i] = negative ? -1.0f : 1.0f;
  }
}

std::size_t pack_12bit(std::span<const std::int64_t> indices, std::span<std::byte> out) {
  for (std::size_t i = 0; i < indices.size(); ++i) {
    if (indices[i] < 0 || indices[i] >= detail::kPacked12Limit) return i;
  }
  for (std::size_t pair = 0; 2 * pair < indices.size(); ++pair) {
    const auto a = static_cast<std::uint32_t>(indices[2 * pair]);
    const auto b = 2 * pair + 1 < indices.size() ? static_cast<std::uint32_t>(indices[2 * pair + 1]) : 0u;
    out[3 * pair] = static_cast<std::byte>(a & 0xFF);
    out[3 * pair + 1] = static_cast<std::byte>(((a >> 8) & 0x0F) | ((b & 0x0F) << 4));
    out[3 * pair + 2] = static_cast<std::byte>((b >> 4) & 0xFF);
  }
  return indices.size();
}

std::size_t unpack_12bit(std::span<const std::byte> in, std::uint64_t limit, std::span<std::int64_t> out) {
  for (std::size_t i = 0; i < out.size(); ++i) {
    const std::uint64_t value = detail::load_12bit(in, i);
    if (value >= limit) return i;
    out[i] = static_cast<std::int64_t>(value);
  }
  return out.size();
}

std::size_t pack_codes(std::span<const std::uint8_t> codes, int bits, std::span<std::byte> out) {
  std::fill(out.begin(), out.end(), std::byte{0});
  for (std::size_t i = 0; i < codes.size(); ++i) {
    if (codes[i] >> bits != 0) return i;
    for (int bit = 0; bit < bits; ++bit) {
      const std::size_t at = i * static_cast<std::size_t>(bits) + static_cast<std::size_t>(bit);
      if ((codes[i] >> bit) & 1u) out[at / 8] |= static_cast<std::byte>(1u << (at % 8));
    }
  }
  return codes.size();
}

std::size_t unpack_codes(std::span<const std::byte> in, int bits, unsigned limit, std::span<std::uint8_t> out) {
  for (std::size_t i = 0; i < out.size(); ++i) {
    const unsigned code = detail::load_code(in, bits, i);
    if (code >= limit) return i;
    out[i] = static_cast<std::uint8_t>(code);
  }
  return out.size();
}

}  // namespace lowcomm::kernels::reference_backend
