// The compact wire formats (pack.hpp): little-endian indices of 1, 2, 4 or 8 bytes, and one sign
// bit per value. Every element (index) or byte (signs) is one work item; validity is a min
// reduction over the offending positions, so the dispatch can name the first one.
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

}  // namespace lowcomm::kernels::kokkos_backend
