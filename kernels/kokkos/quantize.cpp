// Group-wise b-bit quantisation (quantize.hpp), the Reference's arithmetic: each group's scale by
// one work item in index order, then every byte of the bit-packed code stream by one work item,
// which computes the codes of the elements whose bits fall in it.
#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstring>
#include <limits>

#include "kokkos_views.hpp"
#include "lowcomm/core/splitmix.hpp"

namespace lowcomm::kernels::kokkos_backend {

namespace {

KOKKOS_INLINE_FUNCTION float float_of(std::uint32_t bits) {
  float v = 0;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

// The code of one element (kernels/quantize_format.hpp's encode()).
KOKKOS_INLINE_FUNCTION unsigned encode(float x, float scale, int bits, int levels, bool stochastic,
                                       std::uint64_t seed, std::int64_t index) {
  if (bits == 1) return (bits_of(x) >> 31) != 0 ? 1u : 0u;
  if (scale == 0.0f) return static_cast<unsigned>(levels);
  const float y = x / scale;
  const double limit = levels;
  const double uniform = static_cast<double>(splitmix64_at(seed, static_cast<std::uint64_t>(index)) >> 40) * 0x1.0p-24;
  const double q = stochastic ? std::floor(static_cast<double>(y) + uniform) : static_cast<double>(std::round(y));
  return static_cast<unsigned>(static_cast<int>(larger(-limit, smaller(q, limit))) + levels);
}

}  // namespace

std::size_t quantize(std::span<const float> x, std::size_t group, int bits, int levels, bool stochastic,
                     std::uint64_t seed, std::span<std::byte> codes, std::span<float> scales) {
  const auto count = static_cast<std::int64_t>(x.size());
  const auto g = static_cast<std::int64_t>(group);
  const auto in = input(x);
  Output<float> scale_out(scales);
  const auto scale = scale_out.view();
  constexpr std::uint32_t kLargestFinite = 0x7F7FFFFFu;
  // Scales: max |x| / L on the bits of |x| (bits >= 2), or mean |x| summed in double (bits = 1).
  std::int64_t first_bad = count;
  Kokkos::parallel_reduce(
      "lowcomm::quantize::scales", Range(0, static_cast<std::int64_t>(scales.size())),
      KOKKOS_LAMBDA(const std::int64_t group_index, std::int64_t& bad) {
        const std::int64_t begin = group_index * g, end = smaller(begin + g, count);
        std::uint32_t max = 0;
        double sum = 0.0;
        for (std::int64_t i = begin; i < end; ++i) {
          const std::uint32_t magnitude = bits_of(in(i)) & 0x7FFFFFFFu;
          if (magnitude > kLargestFinite && i < bad) bad = i;
          max = larger(max, magnitude);
          sum += static_cast<double>(float_of(magnitude));
        }
        scale(group_index) = bits == 1 ? static_cast<float>(sum / static_cast<double>(end - begin))
                                       : float_of(max) / static_cast<float>(levels);
      },
      Kokkos::Min<std::int64_t>(first_bad));
  scale_out.finish();
  if (first_bad < count) return static_cast<std::size_t>(first_bad);

  const auto scale_in = input(std::span<const float>(scales));
  Output<unsigned char> packed(as_uchars(codes));
  const auto dst = packed.view();
  const std::int64_t total_bits = count * bits;
  Kokkos::parallel_for("lowcomm::quantize::codes", Range(0, static_cast<std::int64_t>(codes.size())),
                       KOKKOS_LAMBDA(const std::int64_t byte) {
                         unsigned value = 0;
                         std::int64_t element = -1;
                         unsigned code = 0;
                         for (std::int64_t bit = 8 * byte; bit < smaller(total_bits, 8 * byte + 8); ++bit) {
                           if (bit / bits != element) {
                             element = bit / bits;
                             code = encode(in(element), scale_in(element / g), bits, levels, stochastic, seed, element);
                           }
                           value |= ((code >> (bit % bits)) & 1u) << (bit - 8 * byte);
                         }
                         dst(byte) = static_cast<unsigned char>(value);
                       });
  packed.finish();
  return x.size();
}

std::size_t dequantize(std::span<const std::byte> codes, std::span<const float> scales, std::size_t group,
                       int bits, int levels, bool sum, bool first, float divisor, std::span<float> out) {
  const auto count = static_cast<std::int64_t>(out.size());
  const auto g = static_cast<std::int64_t>(group);
  const auto src = input(as_uchars(codes));
  const auto scale = input(scales);
  Output<float> decoded(out, /*initialised=*/sum && !first);
  const auto dst = decoded.view();
  std::int64_t first_bad = count;
  Kokkos::parallel_reduce(
      "lowcomm::dequantize", Range(0, count),
      KOKKOS_LAMBDA(const std::int64_t i, std::int64_t& bad) {
        unsigned code = 0;
        for (int j = 0; j < bits; ++j) {
          const std::int64_t bit = i * bits + j;
          code |= ((static_cast<unsigned>(src(bit / 8)) >> (bit % 8)) & 1u) << j;
        }
        const float s = scale(i / g);
        if (bits != 1 && code > 2u * static_cast<unsigned>(levels)) bad = smaller(bad, i);
        const float x = bits == 1 ? (code != 0 ? -s : s) : static_cast<float>(static_cast<int>(code) - levels) * s;
        dst(i) = sum ? (first ? 0.0f + x : dst(i) + x) / divisor : x;
      },
      Kokkos::Min<std::int64_t>(first_bad));
  decoded.finish();
  return static_cast<std::size_t>(smaller(first_bad, count));  // Min's identity is the largest int64
}

}  // namespace lowcomm::kernels::kokkos_backend
