// b-bit quantisation: exact codes for hand-worked inputs, Cpu bitwise against Reference for every
// width, group and rounding on awkward sizes, the error bounds, unbiased stochastic rounding, and
// every error path of both directions.
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <omp.h>

#include "lowcomm/error.hpp"
#include "lowcomm/kernels/elementwise.hpp"
#include "lowcomm/kernels/quantize.hpp"

#include "kernel_test_support.hpp"

namespace lowcomm::kernels {

using test::expect_refused_on_cuda;

namespace {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

constexpr Backend kBackends[] = {Backend::Reference, Backend::Cpu};

std::size_t groups_of(std::size_t count, std::size_t group) { return (count + group - 1) / group; }

// Gaussian values with a few exact zeros, −0.0 and an all-zero stretch, the cases the scale and
// the sign treat specially.
std::vector<float> random_values(std::size_t count, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  std::vector<float> x(count);
  for (auto& v : x) v = normal(rng);
  for (std::size_t i = 0; i < count; i += 17) x[i] = 0.0f;
  for (std::size_t i = 5; i < count; i += 23) x[i] = -0.0f;
  for (std::size_t i = count / 2; i < std::min(count, count / 2 + 40); ++i) x[i] = 0.0f;
  return x;
}

struct Encoded {
  std::vector<std::byte> codes;
  std::vector<float> scales;
};

Encoded encode(Backend backend, const std::vector<float>& x, std::size_t group, int bits,
               Rounding rounding, std::uint64_t seed = 0) {
  Encoded e{std::vector<std::byte>(quantized_bytes(x.size(), bits), std::byte{0xCD}),
            std::vector<float>(groups_of(x.size(), group), -1.0f)};
  quantize(backend, x, group, bits, rounding, seed, e.codes, e.scales);
  return e;
}

std::vector<float> decode(Backend backend, const Encoded& e, std::size_t count, std::size_t group,
                          int bits) {
  std::vector<float> out(count, std::numeric_limits<float>::quiet_NaN());
  dequantize(backend, e.codes, e.scales, group, bits, out);
  return out;
}

TEST(QuantizedBytes, PacksCodesContinuously) {
  EXPECT_EQ(quantized_bytes(0, 5), 0u);
  EXPECT_EQ(quantized_bytes(1, 1), 1u);
  EXPECT_EQ(quantized_bytes(8, 1), 1u);
  EXPECT_EQ(quantized_bytes(9, 1), 2u);
  EXPECT_EQ(quantized_bytes(3, 3), 2u);
  EXPECT_EQ(quantized_bytes(8, 3), 3u);
  EXPECT_EQ(quantized_bytes(11, 8), 11u);
  EXPECT_EQ(quantized_bytes(13, 7), 12u);
  for (int bits : {0, 9, -1}) {
    EXPECT_THAT([&] { quantized_bytes(1, bits); },
                ThrowsMessage<Error>(HasSubstr("bits must be in 1..8")));
  }
  EXPECT_THAT([] { quantized_bytes(std::numeric_limits<std::size_t>::max() / 4, 5); },
              ThrowsMessage<Error>(HasSubstr("overflow")));
}

TEST(Quantize, ThreeBitsByHandRoundingHalfAwayFromZero) {
  // L = 3, scale = 3 / 3 = 1 exactly: q = {3, -2, 1, 0, 3, -3}, codes = q + 3.
  const std::vector<float> x = {3.0f, -1.5f, 0.9f, 0.0f, 2.5f, -2.5f};
  for (Backend backend : kBackends) {
    const Encoded e = encode(backend, x, 6, 3, Rounding::Nearest);
    ASSERT_EQ(e.scales, std::vector<float>{1.0f});
    // Codes 6, 1, 4, 3, 6, 0 in 3-bit fields, least significant first.
    const std::vector<std::byte> want = {std::byte{0x0E}, std::byte{0x67}, std::byte{0x00}};
    EXPECT_EQ(e.codes, want) << to_string(backend);
    const std::vector<float> want_x = {3.0f, -2.0f, 1.0f, 0.0f, 3.0f, -3.0f};
    EXPECT_EQ(decode(backend, e, x.size(), 6, 3), want_x) << to_string(backend);
  }
}

// The byte-aligned widths (Cpu's vectorised paths) on exact halves, where round-half-away-from-zero
// and other roundings part, in groups of 5 so that 4-bit groups straddle bytes.
TEST(Quantize, ByteAlignedWidthsRoundHalvesAwayFromZero) {
  for (int bits : {4, 8}) {
    const float levels = static_cast<float>((1 << (bits - 1)) - 1);  // max |x| = L: scale 1
    const std::vector<float> x = {levels, 0.5f, -0.5f, 1.5f, -2.5f, -levels, 2.5f, -1.5f, 0.49999997f, 0.0f};
    const std::vector<float> want_x = {levels, 1.0f, -1.0f, 2.0f, -3.0f, -levels, 3.0f, -2.0f, 0.0f, 0.0f};
    for (Backend backend : kBackends) {
      const Encoded e = encode(backend, x, 5, bits, Rounding::Nearest);
      ASSERT_EQ(e.scales, (std::vector<float>{1.0f, 1.0f})) << bits;
      EXPECT_EQ(decode(backend, e, x.size(), 5, bits), want_x) << to_string(backend) << " bits " << bits;
    }
  }
}

// The byte-aligned paths where the scale is subnormal (x / scale can exceed L or reach infinity,
// and must clamp as the reference does), and on bad codes far into a big tensor (the first bad
// element is found across the parallel pieces).
TEST(Quantize, ByteAlignedWidthsMatchTheReferenceOnTinyScalesAndNameTheFirstBadCode) {
  for (int bits : {4, 8}) {
    const std::vector<float> x = {1e-44f, -1e-45f, 3e-45f, 0.0f, -7e-45f, 1e-45f, 2.8e-45f};
    for (std::size_t group : {std::size_t{3}, std::size_t{7}}) {
      const Encoded ref = encode(Backend::Reference, x, group, bits, Rounding::Nearest);
      const Encoded cpu = encode(Backend::Cpu, x, group, bits, Rounding::Nearest);
      EXPECT_EQ(cpu.codes, ref.codes) << bits << " bits, group " << group;
      EXPECT_EQ(cpu.scales, ref.scales);
      EXPECT_EQ(decode(Backend::Cpu, ref, x.size(), group, bits), decode(Backend::Reference, ref, x.size(), group, bits));
    }
    std::vector<float> big(100003, 0.5f);
    for (std::size_t i = 0; i < big.size(); i += 7) big[i] = -1.0f;
    for (Backend backend : kBackends) {
      Encoded e = encode(backend, big, 97, bits, Rounding::Nearest);
      const int largest = (1 << bits) - 1;  // 2L + 1: the one malformed code
      // Elements 70001 and 90001 get the malformed code (70001 is odd: the high nibble at 4 bits).
      for (std::size_t element : {std::size_t{90001}, std::size_t{70001}}) {
        if (bits == 8) {
          e.codes[element] = static_cast<std::byte>(largest);
        } else {
          e.codes[element / 2] |= static_cast<std::byte>(largest << (4 * (element % 2)));
        }
      }
      std::vector<float> out(big.size());
      EXPECT_THAT([&] { dequantize(backend, e.codes, e.scales, 97, bits, out); },
                  ThrowsMessage<Error>(HasSubstr("code " + std::to_string(largest) + " of element 70001 exceeds")))
          << to_string(backend) << " " << bits << " bits";
    }
  }
}

TEST(Quantize, OneBitSendsSignsScaledByTheMeanMagnitude) {
  const std::vector<float> x = {1.0f, -3.0f, -0.0f, 2.0f, 4.0f};
  for (Backend backend : kBackends) {
    const Encoded e = encode(backend, x, 4, 1, Rounding::Nearest);
    EXPECT_EQ(e.scales, (std::vector<float>{1.5f, 4.0f})) << to_string(backend);
    EXPECT_EQ(e.codes, std::vector<std::byte>{std::byte{0x06}}) << to_string(backend);
    const std::vector<float> want = {1.5f, -1.5f, -1.5f, 1.5f, 4.0f};
    EXPECT_EQ(decode(backend, e, x.size(), 4, 1), want) << to_string(backend);
  }
}

TEST(Quantize, AllZeroGroupHasScaleZeroAndDecodesToZero) {
  const std::vector<float> x = {0.0f, -0.0f, 0.0f, 5.0f};
  for (Backend backend : kBackends) {
    const Encoded e = encode(backend, x, 3, 8, Rounding::Stochastic, 9);
    EXPECT_EQ(e.scales[0], 0.0f);
    const auto out = decode(backend, e, x.size(), 3, 8);
    EXPECT_EQ(out[0], 0.0f);
    EXPECT_EQ(out[1], 0.0f);
    EXPECT_EQ(out[2], 0.0f);
    EXPECT_FLOAT_EQ(out[3], 5.0f);
  }
}

TEST(Quantize, CpuMatchesReferenceBitwiseAndStaysWithinOneStep) {
  for (std::size_t count : {0, 1, 13, 997, 40009}) {
    const auto x = random_values(count, 21 + static_cast<unsigned>(count));
    for (std::size_t group : {std::size_t{1}, std::size_t{3}, std::size_t{64}, std::size_t{1000},
                              std::max<std::size_t>(count, 1)}) {
      for (int bits = 1; bits <= 8; ++bits) {
        for (Rounding rounding : {Rounding::Nearest, Rounding::Stochastic}) {
          if (bits == 1 && rounding == Rounding::Stochastic) continue;
          const Encoded ref = encode(Backend::Reference, x, group, bits, rounding, 77);
          const Encoded cpu = encode(Backend::Cpu, x, group, bits, rounding, 77);
          const std::string where = "count " + std::to_string(count) + " group " +
                                    std::to_string(group) + " bits " + std::to_string(bits);
          ASSERT_EQ(cpu.codes, ref.codes) << where;
          ASSERT_EQ(cpu.scales, ref.scales) << where;
          const auto out_ref = decode(Backend::Reference, ref, count, group, bits);
          const auto out_cpu = decode(Backend::Cpu, ref, count, group, bits);
          ASSERT_EQ(out_cpu, out_ref) << where;
          if (bits == 1) continue;
          // Nearest is off by at most half a step, stochastic by less than one, plus the float
          // rounding of x / scale and of the decode (≤ 2 · 2^−24 · L steps).
          const float steps = rounding == Rounding::Nearest ? 0.5f : 1.0f;
          for (std::size_t i = 0; i < count; ++i) {
            const float scale = ref.scales[i / group];
            ASSERT_LE(std::fabs(out_ref[i] - x[i]), (steps + 1e-4f) * scale) << where << i;
          }
        }
      }
    }
  }
}

TEST(Quantize, StochasticRoundingIsDeterministicPerSeedAndUnbiased) {
  const auto x = random_values(64, 4);
  const std::size_t group = 16;
  const int bits = 2;  // L = 1: the coarsest grid, where bias would show most
  EXPECT_EQ(encode(Backend::Cpu, x, group, bits, Rounding::Stochastic, 5).codes,
            encode(Backend::Cpu, x, group, bits, Rounding::Stochastic, 5).codes);
  EXPECT_NE(encode(Backend::Cpu, x, group, bits, Rounding::Stochastic, 5).codes,
            encode(Backend::Cpu, x, group, bits, Rounding::Stochastic, 6).codes);

  constexpr int kSeeds = 4000;
  std::vector<double> mean(x.size(), 0.0);
  for (int seed = 0; seed < kSeeds; ++seed) {
    const Encoded e = encode(Backend::Cpu, x, group, bits, Rounding::Stochastic, seed);
    const auto out = decode(Backend::Cpu, e, x.size(), group, bits);
    for (std::size_t i = 0; i < x.size(); ++i) mean[i] += out[i] / double{kSeeds};
  }
  const Encoded e = encode(Backend::Cpu, x, group, bits, Rounding::Nearest);
  for (std::size_t i = 0; i < x.size(); ++i) {
    // Each draw is within one step of x with variance ≤ scale²/4: 5 standard deviations of the
    // mean of kSeeds draws is 5 · scale / (2 · sqrt(kSeeds)) ≈ 0.04 · scale.
    const double scale = e.scales[i / group];
    EXPECT_NEAR(mean[i], x[i], 5 * scale / (2 * std::sqrt(double{kSeeds}))) << i;
  }
}

TEST(Quantize, RejectsNonFiniteInputNamingTheFirstIndex) {
  for (Backend backend : kBackends) {
    for (int bits : {1, 4}) {
      for (float bad : {std::numeric_limits<float>::quiet_NaN(),
                        -std::numeric_limits<float>::infinity()}) {
        auto x = random_values(40009, 8);
        x[30011] = bad;
        x[39999] = bad;
        std::vector<std::byte> codes(quantized_bytes(x.size(), bits));
        std::vector<float> scales(groups_of(x.size(), 100));
        EXPECT_THAT(
            [&] { quantize(backend, x, 100, bits, Rounding::Nearest, 0, codes, scales); },
            ThrowsMessage<Error>(HasSubstr("element 30011 is")));
      }
    }
  }
}

TEST(Quantize, RejectsBadArguments) {
  const std::vector<float> x(10, 1.0f);
  for (Backend backend : kBackends) {
    std::vector<std::byte> codes(quantized_bytes(10, 4));
    std::vector<float> scales(4);
    auto call = [&](std::size_t group, int bits, Rounding rounding, std::size_t code_bytes,
                    std::size_t scale_count) {
      std::vector<std::byte> c(code_bytes);
      std::vector<float> s(scale_count);
      quantize(backend, x, group, bits, rounding, 0, c, s);
    };
    EXPECT_NO_THROW(call(3, 4, Rounding::Nearest, 5, 4));
    EXPECT_THAT([&] { call(3, 0, Rounding::Nearest, 5, 4); },
                ThrowsMessage<Error>(HasSubstr("quantize: bits must be in 1..8, got 0")));
    EXPECT_THAT([&] { call(3, 9, Rounding::Nearest, 5, 4); },
                ThrowsMessage<Error>(HasSubstr("got 9")));
    EXPECT_THAT([&] { call(0, 4, Rounding::Nearest, 5, 4); },
                ThrowsMessage<Error>(HasSubstr("group must be at least 1")));
    EXPECT_THAT([&] { call(3, 4, Rounding::Nearest, 4, 4); },
                ThrowsMessage<Error>(HasSubstr("code buffer holds 4 bytes")));
    EXPECT_THAT([&] { call(3, 4, Rounding::Nearest, 5, 3); },
                ThrowsMessage<Error>(HasSubstr("3 scales given")));
    EXPECT_THAT([&] { call(3, 1, Rounding::Stochastic, 2, 4); },
                ThrowsMessage<Error>(HasSubstr("stochastic rounding is not defined")));
  }
  std::vector<std::byte> codes(5);
  std::vector<float> scales(4);
  expect_refused_on_cuda([&] { quantize(Backend::Cuda, x, 3, 4, Rounding::Nearest, 0, codes, scales); }, "quantize");
}

// Error feedback's correction fused into the scales' pass: corrected and the payload are those of
// scale_add then quantize, bit for bit, at every width, rounding and group, in place or not, and on
// the Cpu at 1 to 3 threads (40009 elements split into 1 to 3 ranges of groups).
TEST(CorrectedQuantize, IsScaleAddThenQuantizeBitwise) {
  unsigned seed = 600;
  for (const std::size_t count : {std::size_t{1}, std::size_t{13}, std::size_t{997}, std::size_t{40009}}) {
    for (const std::size_t group : {std::size_t{1}, std::size_t{7}, std::size_t{768}, count}) {
      for (const int bits : {1, 3, 4, 8}) {
        for (const Rounding rounding : {Rounding::Nearest, Rounding::Stochastic}) {
          if (bits == 1 && rounding == Rounding::Stochastic) continue;
          const float decay = (seed % 3 == 0) ? 0.0f : (seed % 3 == 1 ? 1.0f : 0.9f);
          const std::vector<float> residual = random_values(count, seed);
          const std::vector<float> gradient = random_values(count, seed + 1000);
          ++seed;
          std::vector<float> expected(count);
          scale_add(Backend::Reference, decay, residual, gradient, expected);
          const Encoded want = encode(Backend::Reference, expected, group, bits, rounding, seed);
          for (const auto [backend, threads] : {std::pair{Backend::Reference, 1}, std::pair{Backend::Cpu, 1},
                                                std::pair{Backend::Cpu, 2}, std::pair{Backend::Cpu, 3}}) {
            omp_set_num_threads(threads);
            for (const bool in_place : {false, true}) {
              SCOPED_TRACE(::testing::Message() << to_string(backend) << " threads " << threads << " count " << count
                                                << " group " << group << " bits " << bits << " decay " << decay
                                                << " in place " << in_place);
              std::vector<float> corrected = in_place ? residual : std::vector<float>(count, 123.0f);
              Encoded got{std::vector<std::byte>(quantized_bytes(count, bits), std::byte{0xCD}),
                          std::vector<float>(groups_of(count, group), -1.0f)};
              corrected_quantize(backend, decay, in_place ? std::span<const float>(corrected) : residual, gradient,
                                 corrected, group, bits, rounding, seed, got.codes, got.scales);
              test::expect_bitwise_equal(corrected, expected);
              ASSERT_EQ(got.codes, want.codes);
              test::expect_bitwise_equal(got.scales, want.scales);
            }
          }
        }
      }
    }
  }
  omp_set_num_threads(omp_get_num_procs());
}

TEST(CorrectedQuantize, RejectsBadArgumentsAndNamesTheFirstNonFiniteElement) {
  const std::vector<float> x(10, 1.0f);
  std::vector<float> buffer(20, 1.0f);
  const std::span<float> corrected = std::span(buffer).first(10);
  std::vector<std::byte> codes(quantized_bytes(10, 4));
  std::vector<float> scales(4);
  for (Backend backend : kBackends) {
    const auto call = [&](std::span<const float> residual, std::span<const float> gradient, std::span<float> out,
                          int bits, Rounding rounding) {
      std::vector<std::byte> c(quantized_bytes(out.size(), bits));
      std::vector<float> s(groups_of(out.size(), 3));
      corrected_quantize(backend, 0.5f, residual, gradient, out, 3, bits, rounding, 0, c, s);
    };
    EXPECT_NO_THROW(call(x, x, corrected, 4, Rounding::Nearest));
    EXPECT_NO_THROW(call(corrected, x, corrected, 4, Rounding::Nearest));  // in place on the residual
    const std::vector<float> short_gradient(9, 1.0f);
    EXPECT_THAT([&] { call(x, short_gradient, corrected, 4, Rounding::Nearest); },
                ThrowsMessage<Error>(HasSubstr("corrected_quantize: residual, gradient and corrected must have one "
                                               "size, got 10, 9 and 10")));
    // Half a step along the residual, and the gradient itself: overlaps refused.
    EXPECT_THAT([&] { call(std::span(buffer).subspan(5, 10), x, corrected, 4, Rounding::Nearest); },
                ThrowsMessage<Error>(HasSubstr("corrected_quantize: corrected overlaps an input")));
    EXPECT_THAT([&] { call(x, corrected, corrected, 4, Rounding::Nearest); },
                ThrowsMessage<Error>(HasSubstr("corrected_quantize: corrected overlaps an input")));
    EXPECT_THAT([&] { call(x, x, corrected, 1, Rounding::Stochastic); },
                ThrowsMessage<Error>(HasSubstr("corrected_quantize: stochastic rounding is not defined")));
    EXPECT_THAT([&] { corrected_quantize(backend, 1.0f, x, x, corrected, 3, 4, Rounding::Nearest, 0,
                                         std::span(codes).first(4), scales); },
                ThrowsMessage<Error>(HasSubstr("code buffer holds 4 bytes")));
    // A non-finite residual element, corrected past the parallel threshold: the first one is named.
    for (int bits : {1, 4, 8}) {
      auto residual = random_values(40009, 9);
      residual[30011] = std::numeric_limits<float>::infinity();
      residual[39999] = std::numeric_limits<float>::quiet_NaN();
      const auto gradient = random_values(40009, 10);
      std::vector<float> out(40009);
      std::vector<std::byte> c(quantized_bytes(out.size(), bits));
      std::vector<float> s(groups_of(out.size(), 100));
      EXPECT_THAT([&] { corrected_quantize(backend, 1.0f, residual, gradient, out, 100, bits, Rounding::Nearest, 0,
                                           c, s); },
                  ThrowsMessage<Error>(HasSubstr("element 30011 is")));
    }
  }
  expect_refused_on_cuda([&] { corrected_quantize(Backend::Cuda, 1.0f, x, x, corrected, 3, 4, Rounding::Nearest, 0,
                                                  codes, scales); },
                         "corrected_quantize");
}

TEST(Dequantize, RejectsCodesBeyondTwoLNamingTheFirst) {
  for (Backend backend : kBackends) {
    // bits = 2: L = 1, code 3 is malformed. 40009 elements → past the OpenMP threshold.
    std::vector<float> x(40009, 1.0f);
    Encoded e = encode(backend, x, 7, 2, Rounding::Nearest);
    e.codes[30000 / 4] |= std::byte{0x03};  // element 30000's two bits
    e.codes[39000 / 4] |= std::byte{0x03};
    std::vector<float> out(x.size());
    EXPECT_THAT([&] { dequantize(backend, e.codes, e.scales, 7, 2, out); },
                ThrowsMessage<Error>(HasSubstr("code 3 of element 30000 exceeds 2")));

    Encoded wide = encode(backend, {1.0f, 2.0f}, 2, 8, Rounding::Nearest);
    wide.codes[1] = std::byte{0xFF};
    std::vector<float> two(2);
    EXPECT_THAT([&] { dequantize(backend, wide.codes, wide.scales, 2, 8, two); },
                ThrowsMessage<Error>(HasSubstr("code 255 of element 1 exceeds 254")));
  }
}

TEST(Dequantize, RejectsMalformedScalesSizesAndPadding) {
  for (Backend backend : kBackends) {
    const std::vector<float> x = {1.0f, -2.0f, 3.0f, 0.5f, 0.25f};
    const Encoded good = encode(backend, x, 2, 3, Rounding::Nearest);
    std::vector<float> out(x.size());
    EXPECT_NO_THROW(dequantize(backend, good.codes, good.scales, 2, 3, out));
    for (float bad : {std::numeric_limits<float>::quiet_NaN(),
                      std::numeric_limits<float>::infinity(), -1.0f}) {
      Encoded e = good;
      e.scales[1] = bad;
      EXPECT_THAT([&] { dequantize(backend, e.codes, e.scales, 2, 3, out); },
                  ThrowsMessage<Error>(HasSubstr("of group 1 is not a finite value")));
    }
    Encoded padded = good;  // 5 × 3 = 15 bits: the top bit of byte 1 is padding
    padded.codes[1] |= std::byte{0x80};
    EXPECT_THAT([&] { dequantize(backend, padded.codes, padded.scales, 2, 3, out); },
                ThrowsMessage<Error>(HasSubstr("padding bits")));

    std::vector<std::byte> truncated(good.codes.begin(), good.codes.end() - 1);
    EXPECT_THAT([&] { dequantize(backend, truncated, good.scales, 2, 3, out); },
                ThrowsMessage<Error>(HasSubstr("code buffer holds 1 bytes")));
    std::vector<float> fewer(good.scales.begin(), good.scales.end() - 1);
    EXPECT_THAT([&] { dequantize(backend, good.codes, fewer, 2, 3, out); },
                ThrowsMessage<Error>(HasSubstr("2 scales given")));
    EXPECT_THAT([&] { dequantize(backend, good.codes, good.scales, 0, 3, out); },
                ThrowsMessage<Error>(HasSubstr("group must be at least 1")));
    EXPECT_THAT([&] { dequantize(backend, good.codes, good.scales, 2, 9, out); },
                ThrowsMessage<Error>(HasSubstr("dequantize: bits must be in 1..8")));
  }
  std::vector<std::byte> codes(1);
  std::vector<float> scales(1);
  std::vector<float> out(1);
  expect_refused_on_cuda([&] { dequantize(Backend::Cuda, codes, scales, 1, 8, out); }, "dequantize");
}

// dequantize_sum, one step per rank, gives the decoder's mean ((0 + x̂_0) + x̂_1 + ...) / W exactly
// as dequantizing each payload and summing does, on both backends, for every width and awkward
// sizes (the byte-aligned fast paths included), and checks its payloads as dequantize does.
TEST(DequantizeSum, IsTheMeanOfTheDequantisedPayloadsBitForBit) {
  std::mt19937 random(11);
  std::normal_distribution<float> normal;
  for (const int bits : {1, 3, 4, 8}) {
    for (const std::size_t n : {1u, 7u, 1000u, 20001u}) {
      for (const int world : {1, 2, 3}) {
        const std::size_t group = n > 64 ? 64 : n;
        const std::size_t groups = (n + group - 1) / group;
        std::vector<std::vector<std::byte>> codes(world, std::vector<std::byte>(quantized_bytes(n, bits)));
        std::vector<std::vector<float>> scales(world, std::vector<float>(groups));
        for (int w = 0; w < world; ++w) {
          std::vector<float> x(n);
          for (float& v : x) v = normal(random);
          quantize(Backend::Cpu, x, group, bits, Rounding::Nearest, 0, codes[w], scales[w]);
        }
        // The definition: each payload decoded, then summed from +0 in rank order and divided.
        std::vector<float> expected(n, 0.0f), decoded(n);
        for (int w = 0; w < world; ++w) {
          dequantize(Backend::Reference, codes[w], scales[w], group, bits, decoded);
          for (std::size_t i = 0; i < n; ++i) expected[i] = (w == 0 ? 0.0f + decoded[i] : expected[i] + decoded[i]);
        }
        for (float& e : expected) e = e / static_cast<float>(world);
        for (const Backend backend : {Backend::Reference, Backend::Cpu}) {
          std::vector<float> sum(n, std::numeric_limits<float>::quiet_NaN());  // first overwrites
          for (int w = 0; w < world; ++w) {
            dequantize_sum(backend, codes[w], scales[w], group, bits, w == 0,
                           w + 1 == world ? static_cast<float>(world) : 1.0f, sum);
          }
          for (std::size_t i = 0; i < n; ++i) {
            ASSERT_EQ(std::bit_cast<std::uint32_t>(sum[i]), std::bit_cast<std::uint32_t>(expected[i]))
                << to_string(backend) << " bits " << bits << " n " << n << " world " << world << " [" << i << "]";
          }
        }
      }
    }
  }
  std::vector<std::byte> bad(quantized_bytes(8, 3), std::byte{0xFF});  // codes 7 > 2L = 6
  const std::vector<float> one{1.0f};
  std::vector<float> sum(8);
  for (const Backend backend : {Backend::Reference, Backend::Cpu}) {
    EXPECT_THAT([&] { dequantize_sum(backend, bad, one, 8, 3, true, 1.0f, sum); },
                ThrowsMessage<Error>(HasSubstr("code 7 of element 0 exceeds 6")));
    const std::vector<std::byte> fine(quantized_bytes(8, 3));
    EXPECT_THAT([&] { dequantize_sum(backend, fine, one, 8, 3, true, 0.0f, sum); },
                ThrowsMessage<Error>(HasSubstr("divisor 0 must be a positive finite number")));
  }
}

}  // namespace
}  // namespace lowcomm::kernels
