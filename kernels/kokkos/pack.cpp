// The compact wire formats (pack.hpp): little-endian indices of 1, 2, 4 or 8 bytes or of 12 bits,
// one sign bit per value, and codes of 1 to 8 bits. Every element (index, code) or output byte
// (signs, codes) or 12-bit pair is one work item; validity is a min reduction over the offending
// positions, so the dispatch can name the first one.
#include <Kokkos_Core.hpp>

#include <limits>

#include "kokkos_views.hpp"

namespace lowcomm::kernels::kokkos_backend {

namespace {

// The largest index a width holds; 8 bytes keep the sign bit clear (as kernels/cpu).
std::uint64_t max_index(std::size_t bytes) {
  return bytes == 8 ? static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())
                    : (std::uint64_t{1} << (8 * bytes)) - 1;
}

KOKKOS_INLINE_FUNCTION bool sign_bit(float v) { return (bits_of(v) >> 31) != 0; }

}  // namespace

std::size_t pack_indices(std::span<const std::int64_t> indices, std::size_t bytes, std::span<std::byte> out) {
  const auto n = static_cast<std::int64_t>(indices.size());
  const auto in = input(indices);
  Output<unsigned char> packed(as_uchars(out));
  const auto dst = packed.view();
  const std::uint64_t max = max_index(bytes);
  const auto width = static_cast<std::int64_t>(bytes);
  std::int64_t first_bad = n;
  Kokkos::parallel_reduce(
      "lowcomm::pack_indices", Range(0, n),
      KOKKOS_LAMBDA(const std::int64_t i, std::int64_t& bad) {
        const std::int64_t index = in(i);
        if (index < 0 || static_cast<std::uint64_t>(index) > max) bad = smaller(bad, i);
        const auto value = static_cast<std::uint64_t>(index);
        for (std::int64_t b = 0; b < width; ++b) dst(i * width + b) = static_cast<unsigned char>(value >> (8 * b));
      },
      Kokkos::Min<std::int64_t>(first_bad));
  packed.finish();
  return static_cast<std::size_t>(smaller(first_bad, n));  // Min's identity is the largest int64
}

std::size_t unpack_indices(std::span<const std::byte> in, std::size_t bytes, std::uint64_t limit,
                           std::span<std::int64_t> out) {
  const auto n = static_cast<std::int64_t>(out.size());
  const auto src = input(as_uchars(in));
  Output<std::int64_t> unpacked(out);
  const auto dst = unpacked.view();
  const std::uint64_t max = max_index(bytes);
  const auto width = static_cast<std::int64_t>(bytes);
  std::int64_t first_bad = n;
  Kokkos::parallel_reduce(
      "lowcomm::unpack_indices", Range(0, n),
      KOKKOS_LAMBDA(const std::int64_t i, std::int64_t& bad) {
        std::uint64_t value = 0;
        for (std::int64_t b = 0; b < width; ++b) value |= static_cast<std::uint64_t>(src(i * width + b)) << (8 * b);
        if (!(value < limit && value <= max)) bad = smaller(bad, i);
        dst(i) = static_cast<std::int64_t>(value);
      },
      Kokkos::Min<std::int64_t>(first_bad));
  unpacked.finish();
  return static_cast<std::size_t>(smaller(first_bad, n));  // Min's identity is the largest int64
}

std::size_t pack_signs(std::span<const float> values, std::span<std::byte> out) {
  const auto n = static_cast<std::int64_t>(values.size());
  const auto in = input(values);
  Output<unsigned char> packed(as_uchars(out));
  const auto dst = packed.view();
  std::int64_t first_nan = n;
  Kokkos::parallel_reduce(
      "lowcomm::pack_signs", Range(0, static_cast<std::int64_t>(out.size())),
      KOKKOS_LAMBDA(const std::int64_t byte, std::int64_t& nan) {
        unsigned bits = 0;
        for (std::int64_t i = 8 * byte; i < smaller(n, 8 * byte + 8); ++i) {
          const float v = in(i);
          if (v != v) nan = smaller(nan, i);
          bits |= (sign_bit(v) ? 1u : 0u) << (i - 8 * byte);
        }
        dst(byte) = static_cast<unsigned char>(bits);
      },
      Kokkos::Min<std::int64_t>(first_nan));
  packed.finish();
  return static_cast<std::size_t>(smaller(first_nan, n));  // Min's identity is the largest int64
}

void unpack_signs(std::span<const std::byte> in, std::span<float> out) {
  const auto src = input(as_uchars(in));
  Output<float> unpacked(out);
  const auto dst = unpacked.view();
  Kokkos::parallel_for("lowcomm::unpack_signs", Range(0, static_cast<std::int64_t>(out.size())),
                       KOKKOS_LAMBDA(const std::int64_t i) {
                         dst(i) = ((src(i / 8) >> (i % 8)) & 1u) != 0 ? -1.0f : 1.0f;
                       });
  unpacked.finish();
}

std::size_t pack_12bit(std::span<const std::int64_t> indices, std::span<std::byte> out) {
  const auto n = static_cast<std::int64_t>(indices.size());
  const auto in = input(indices);
  Output<unsigned char> packed(as_uchars(out));
  const auto dst = packed.view();
  std::int64_t first_bad = n;
  Kokkos::parallel_reduce(
      "lowcomm::pack_12bit", Range(0, static_cast<std::int64_t>(out.size() / 3)),
      KOKKOS_LAMBDA(const std::int64_t p, std::int64_t& bad) {
        std::uint32_t pair[2] = {0u, 0u};
        for (std::int64_t j = 0; j < 2 && 2 * p + j < n; ++j) {
          const std::int64_t index = in(2 * p + j);
          if (index < 0 || index >= 4096) bad = smaller(bad, 2 * p + j);
          pair[j] = static_cast<std::uint32_t>(index);
        }
        dst(3 * p) = static_cast<unsigned char>(pair[0] & 0xFF);
        dst(3 * p + 1) = static_cast<unsigned char>(((pair[0] >> 8) & 0x0F) | ((pair[1] & 0x0F) << 4));
        dst(3 * p + 2) = static_cast<unsigned char>((pair[1] >> 4) & 0xFF);
      },
      Kokkos::Min<std::int64_t>(first_bad));
  packed.finish();
  return static_cast<std::size_t>(smaller(first_bad, n));  // Min's identity is the largest int64
}

std::size_t unpack_12bit(std::span<const std::byte> in, std::uint64_t limit, std::span<std::int64_t> out) {
  const auto n = static_cast<std::int64_t>(out.size());
  const auto src = input(as_uchars(in));
  Output<std::int64_t> unpacked(out);
  const auto dst = unpacked.view();
  std::int64_t first_bad = n;
  Kokkos::parallel_reduce(
      "lowcomm::unpack_12bit", Range(0, n),
      KOKKOS_LAMBDA(const std::int64_t i, std::int64_t& bad) {
        const std::int64_t p = i / 2;
        const auto b0 = static_cast<std::uint64_t>(src(3 * p)), b1 = static_cast<std::uint64_t>(src(3 * p + 1)),
                   b2 = static_cast<std::uint64_t>(src(3 * p + 2));
        const std::uint64_t value = i % 2 == 0 ? (b0 | (b1 & 0x0F) << 8) : ((b1 >> 4) | b2 << 4);
        if (value >= limit) bad = smaller(bad, i);
        dst(i) = static_cast<std::int64_t>(value);
      },
      Kokkos::Min<std::int64_t>(first_bad));
  unpacked.finish();
  return static_cast<std::size_t>(smaller(first_bad, n));  // Min's identity is the largest int64
}

std::size_t pack_codes(std::span<const std::uint8_t> codes, int bits, std::span<std::byte> out) {
  const auto n = static_cast<std::int64_t>(codes.size());
  const auto in = input(codes);
  Output<unsigned char> packed(as_uchars(out));
  const auto dst = packed.view();
  const std::int64_t width = bits;
  const unsigned mask = (1u << bits) - 1u;
  std::int64_t first_bad = n;
  Kokkos::parallel_reduce(
      "lowcomm::pack_codes", Range(0, static_cast<std::int64_t>(out.size())),
      KOKKOS_LAMBDA(const std::int64_t byte, std::int64_t& bad) {
        // The codes with a bit in this byte: bits [8·byte, 8·byte + 8).
        unsigned value = 0;
        const std::int64_t last = smaller(n - 1, (8 * byte + 7) / width);
        for (std::int64_t i = 8 * byte / width; i <= last; ++i) {
          const unsigned code = in(i);
          if ((code & ~mask) != 0) bad = smaller(bad, i);
          const std::int64_t shift = i * width - 8 * byte;
          value |= shift >= 0 ? (code & mask) << shift : (code & mask) >> -shift;
        }
        dst(byte) = static_cast<unsigned char>(value & 0xFF);
      },
      Kokkos::Min<std::int64_t>(first_bad));
  packed.finish();
  return static_cast<std::size_t>(smaller(first_bad, n));  // Min's identity is the largest int64
}

std::size_t unpack_codes(std::span<const std::byte> in, int bits, unsigned limit, std::span<std::uint8_t> out) {
  const auto n = static_cast<std::int64_t>(out.size());
  const auto bytes = static_cast<std::int64_t>(in.size());
  const auto src = input(as_uchars(in));
  Output<std::uint8_t> unpacked(out);
  const auto dst = unpacked.view();
  const std::int64_t width = bits;
  const unsigned mask = (1u << bits) - 1u;
  std::int64_t first_bad = n;
  Kokkos::parallel_reduce(
      "lowcomm::unpack_codes", Range(0, n),
      KOKKOS_LAMBDA(const std::int64_t i, std::int64_t& bad) {
        const std::int64_t at = i * width;
        unsigned window = src(at / 8);
        if (at / 8 + 1 < bytes) window |= static_cast<unsigned>(src(at / 8 + 1)) << 8;
        const unsigned code = (window >> (at % 8)) & mask;
        if (code >= limit) bad = smaller(bad, i);
        dst(i) = static_cast<std::uint8_t>(code);
      },
      Kokkos::Min<std::int64_t>(first_bad));
  unpacked.finish();
  return static_cast<std::size_t>(smaller(first_bad, n));  // Min's identity is the largest int64
}

}  // namespace lowcomm::kernels::kokkos_backend
