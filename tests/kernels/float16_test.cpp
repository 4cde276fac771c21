// fp16 and bf16 conversions against independent definitions: the compiler's own _Float16
// conversions (IEEE round to nearest even) for every binary16 value and a sweep of float bit
// patterns, and bf16's rounding by hand; NaN stays NaN. Array conversions (SIMD clones) give the
// scalar functions' bits on sizes that are not a multiple of the vector width.
#include "lowcomm/kernels/float16.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <vector>

namespace lowcomm::kernels {
namespace {

bool is_nan16(std::uint16_t h) { return (h & 0x7C00u) == 0x7C00u && (h & 0x3FFu) != 0; }

// Every 65521st float bit pattern (a prime stride, so every exponent and many mantissas), plus
// the ones around binary16's boundaries.
std::vector<float> float_sweep() {
  std::vector<float> values;
  for (std::uint64_t bits = 0; bits <= 0xFFFFFFFFu; bits += 65521) values.push_back(std::bit_cast<float>(static_cast<std::uint32_t>(bits)));
  for (const float v : {65504.0f, 65520.0f, 65519.996f, 6.1035156e-05f, 5.9604645e-08f, 2.9802322e-08f,
                        2.9802326e-08f, 1.0f + 0x1p-11f, 1.0f + 0x1p-11f + 0x1p-23f, 0.0f, -0.0f,
                        std::numeric_limits<float>::infinity(), std::numeric_limits<float>::denorm_min()}) {
    values.push_back(v);
    values.push_back(-v);
  }
  return values;
}

TEST(Float16, RoundsToNearestEvenAsTheCompilersFloat16Does) {
  for (const float v : float_sweep()) {
    const std::uint16_t ours = float_to_f16(v);
    if (std::isnan(v)) {
      EXPECT_TRUE(is_nan16(ours)) << std::bit_cast<std::uint32_t>(v);
      continue;
    }
    const auto want = std::bit_cast<std::uint16_t>(static_cast<_Float16>(v));
    ASSERT_EQ(ours, want) << "float bits 0x" << std::hex << std::bit_cast<std::uint32_t>(v);
  }
}

TEST(Float16, EveryBinary16ValueWidensExactlyAndRoundTrips) {
  for (std::uint32_t h = 0; h <= 0xFFFFu; ++h) {
    const auto bits = static_cast<std::uint16_t>(h);
    const float wide = f16_to_float(bits);
    if (is_nan16(bits)) {
      EXPECT_TRUE(std::isnan(wide));
      EXPECT_TRUE(is_nan16(float_to_f16(wide)));
      continue;
    }
    ASSERT_EQ(std::bit_cast<std::uint32_t>(wide),
              std::bit_cast<std::uint32_t>(static_cast<float>(std::bit_cast<_Float16>(bits))))
        << "binary16 0x" << std::hex << h;
    ASSERT_EQ(float_to_f16(wide), bits) << "binary16 0x" << std::hex << h;
  }
}

TEST(Bfloat16, RoundsToNearestEvenAndKeepsNaN) {
  for (const float v : float_sweep()) {
    const auto x = std::bit_cast<std::uint32_t>(v);
    const std::uint16_t ours = float_to_bf16(v);
    if (std::isnan(v)) {
      EXPECT_TRUE(std::isnan(bf16_to_float(ours)));
      continue;
    }
    // By hand: keep the top 16 bits, round up when the low 16 exceed half, or equal it and the
    // kept part is odd.
    const std::uint32_t low = x & 0xFFFFu;
    std::uint32_t want = x >> 16;
    if (low > 0x8000u || (low == 0x8000u && (want & 1u) != 0)) ++want;
    ASSERT_EQ(ours, static_cast<std::uint16_t>(want)) << "float bits 0x" << std::hex << x;
    EXPECT_EQ(std::bit_cast<std::uint32_t>(bf16_to_float(ours)), want << 16);
  }
}

TEST(Float16, ArraysGiveTheScalarConversionsBits) {
  const std::vector<float> sweep = float_sweep();
  for (const ValueType type : {ValueType::F16, ValueType::BF16}) {
    for (const std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{17}, std::size_t{4099}, sweep.size()}) {
      const std::vector<float> values(sweep.begin(), sweep.begin() + static_cast<std::ptrdiff_t>(n));
      std::vector<std::byte> wire(n * 2 + 1);  // one byte more: an odd start offset below
      const std::span<std::byte> unaligned = std::span(wire).subspan(1, n * 2);
      encode_values(values, type, unaligned);
      std::vector<float> back(n);
      decode_values(unaligned, type, back);
      for (std::size_t i = 0; i < n; ++i) {
        std::uint16_t bits = 0;
        std::memcpy(&bits, unaligned.data() + 2 * i, 2);
        const std::uint16_t want = type == ValueType::F16 ? float_to_f16(values[i]) : float_to_bf16(values[i]);
        ASSERT_EQ(bits, want) << i;
        const float wide = type == ValueType::F16 ? f16_to_float(bits) : bf16_to_float(bits);
        ASSERT_EQ(std::bit_cast<std::uint32_t>(back[i]), std::bit_cast<std::uint32_t>(wide)) << i;
      }
    }
  }
}

// Found by fuzzing (tests/fuzz/regressions/unpack_kernels/empty-fp32-decode): an empty fp32
// payload was copied with memcpy from a null pointer, undefined behaviour even for 0 bytes, which
// the debug build's UndefinedBehaviorSanitizer stops at.
TEST(ValueEncoding, EmptySpansEncodeAndDecodeToNothing) {
  for (const ValueType type : {ValueType::F32, ValueType::F16, ValueType::BF16}) {
    for (const Backend backend : {Backend::Reference, Backend::Cpu}) {
      encode_values(backend, std::span<const float>(), type, std::span<std::byte>());
      decode_values(backend, std::span<const std::byte>(), type, std::span<float>());
    }
  }
}

}  // namespace
}  // namespace lowcomm::kernels
