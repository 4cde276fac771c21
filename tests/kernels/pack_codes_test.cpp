// 12-bit indices and b-bit codes: the exact bytes by hand, Cpu against Reference on awkward sizes
// (odd counts, every code width, one past the OpenMP thresholds) and every error path.
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "lowcomm/error.hpp"
#include "lowcomm/kernels/pack.hpp"

#include "kernel_test_support.hpp"

namespace lowcomm::kernels {

using test::expect_refused_on_cuda;

namespace {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

constexpr Backend kBackends[] = {Backend::Reference, Backend::Cpu};
// Odd and even counts, and past the Cpu backend's thresholds (2^15 pairs, 2^14 code bytes).
constexpr std::size_t kSizes[] = {0, 1, 2, 7, 13, 1009, 70001, 140002};

std::vector<std::int64_t> random_indices(std::size_t count, std::int64_t limit, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::int64_t> pick(0, limit - 1);
  std::vector<std::int64_t> indices(count);
  for (auto& i : indices) i = pick(rng);
  return indices;
}

std::vector<std::uint8_t> random_codes(std::size_t count, unsigned limit, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<unsigned> pick(0, limit - 1);
  std::vector<std::uint8_t> codes(count);
  for (auto& c : codes) c = static_cast<std::uint8_t>(pick(rng));
  return codes;
}

TEST(Packed12, BytesAreThreePerPairAnOddCountPadded) {
  EXPECT_EQ(packed_12bit_bytes(0), 0u);
  EXPECT_EQ(packed_12bit_bytes(1), 3u);
  EXPECT_EQ(packed_12bit_bytes(2), 3u);
  EXPECT_EQ(packed_12bit_bytes(3), 6u);
  EXPECT_EQ(packed_12bit_bytes(4096), 6144u);
}

TEST(Packed12, IsTemplarsLayout) {
  // (a, b) → [a & 0xff, (a >> 8 & 0xf) | (b & 0xf) << 4, b >> 4]; the third index pairs with 0.
  const std::vector<std::int64_t> indices = {0xABC, 0x123, 4095};
  for (Backend backend : kBackends) {
    std::vector<std::byte> out(6, std::byte{0x55});
    pack_12bit(backend, indices, out);
    const std::vector<std::byte> expected = {std::byte{0xBC}, std::byte{0x3A}, std::byte{0x12},
                                             std::byte{0xFF}, std::byte{0x0F}, std::byte{0x00}};
    EXPECT_EQ(out, expected) << to_string(backend);
  }
}

TEST(Packed12, CpuMatchesReferenceAndRoundTrips) {
  for (std::size_t n : kSizes) {
    const std::vector<std::int64_t> indices = random_indices(n, 4096, static_cast<unsigned>(n) + 3);
    std::vector<std::byte> reference(packed_12bit_bytes(n)), cpu(reference.size());
    pack_12bit(Backend::Reference, indices, reference);
    pack_12bit(Backend::Cpu, indices, cpu);
    EXPECT_EQ(cpu, reference) << n;
    for (Backend backend : kBackends) {
      std::vector<std::int64_t> back(n, -1);
      unpack_12bit(backend, reference, 4096, back);
      EXPECT_EQ(back, indices) << to_string(backend) << " " << n;
    }
  }
}

TEST(Packed12, RefusesIndicesThatDoNotFitNamingTheFirst) {
  for (Backend backend : kBackends) {
    std::vector<std::int64_t> indices(100003, 7);
    indices[70000] = 4096;
    indices[90000] = -1;
    std::vector<std::byte> out(packed_12bit_bytes(indices.size()));
    EXPECT_THAT([&] { pack_12bit(backend, indices, out); },
                ThrowsMessage<Error>(HasSubstr("index 4096 at position 70000 does not fit in 12 bits")));
    std::vector<std::byte> wrong(out.size() - 1);
    EXPECT_THAT([&] { pack_12bit(backend, indices, wrong); }, ThrowsMessage<Error>(HasSubstr("output holds")));
  }
}

TEST(Unpack12, RefusesMalformedPayloads) {
  for (Backend backend : kBackends) {
    const std::vector<std::int64_t> indices = {5, 4000, 9};
    std::vector<std::byte> packed(packed_12bit_bytes(3));
    pack_12bit(backend, indices, packed);
    std::vector<std::int64_t> out(3);
    EXPECT_THAT([&] { unpack_12bit(backend, packed, 1000, out); },
                ThrowsMessage<Error>(HasSubstr("index 4000 at position 1 is not below the limit 1000")));
    EXPECT_THAT([&] { unpack_12bit(backend, std::span(packed).first(5), 4096, out); },
                ThrowsMessage<Error>(HasSubstr("malformed payload: 5 bytes, 3 indices need exactly 6")));
    packed[5] = std::byte{0x01};  // the padding index after an odd count
    EXPECT_THAT([&] { unpack_12bit(backend, packed, 4096, out); },
                ThrowsMessage<Error>(HasSubstr("the padding index after the last of 3 is 16, not 0")));
  }
}

TEST(PackedCodes, BytesAreTheBitsRoundedUp) {
  EXPECT_EQ(packed_code_bytes(0, 2), 0u);
  EXPECT_EQ(packed_code_bytes(5, 2), 2u);
  EXPECT_EQ(packed_code_bytes(8, 3), 3u);
  EXPECT_EQ(packed_code_bytes(9, 3), 4u);
  EXPECT_EQ(packed_code_bytes(3, 8), 3u);
  EXPECT_THROW(packed_code_bytes(3, 0), Error);
  EXPECT_THROW(packed_code_bytes(3, 9), Error);
}

TEST(PackedCodes, SetLeastSignificantBitsFirst) {
  for (Backend backend : kBackends) {
    std::vector<std::byte> two(2, std::byte{0xFF});
    pack_codes(backend, std::vector<std::uint8_t>{1, 2, 3, 0, 2}, 2, two);
    EXPECT_EQ(two, (std::vector<std::byte>{std::byte{0x39}, std::byte{0x02}})) << to_string(backend);
    std::vector<std::byte> three(3, std::byte{0xFF});  // 3 bits straddle bytes: 5 | 6 << 3 | 7 << 6 ...
    pack_codes(backend, std::vector<std::uint8_t>{5, 6, 7, 1, 4, 0, 3, 2}, 3, three);
    EXPECT_EQ(three, (std::vector<std::byte>{std::byte{0xF5}, std::byte{0x43}, std::byte{0x4C}})) << to_string(backend);
  }
}

TEST(PackedCodes, CpuMatchesReferenceAndRoundTripsAtEveryWidth) {
  for (int bits = 1; bits <= 8; ++bits) {
    for (std::size_t n : kSizes) {
      const unsigned limit = 1u << bits;
      const std::vector<std::uint8_t> codes = random_codes(n, limit, static_cast<unsigned>(n * 8 + bits));
      std::vector<std::byte> reference(packed_code_bytes(n, bits)), cpu(reference.size());
      pack_codes(Backend::Reference, codes, bits, reference);
      pack_codes(Backend::Cpu, codes, bits, cpu);
      EXPECT_EQ(cpu, reference) << bits << " bits, " << n;
      for (Backend backend : kBackends) {
        std::vector<std::uint8_t> back(n);
        unpack_codes(backend, reference, bits, limit, back);
        EXPECT_EQ(back, codes) << to_string(backend) << " " << bits << " bits, " << n;
      }
    }
  }
}

TEST(PackedCodes, RefuseCodesTooWideAndMalformedPayloads) {
  for (Backend backend : kBackends) {
    for (int bits : {2, 3}) {
      SCOPED_TRACE(bits);
      std::vector<std::uint8_t> codes(40001, 1);
      codes[30000] = static_cast<std::uint8_t>(1u << bits);
      std::vector<std::byte> out(packed_code_bytes(codes.size(), bits));
      EXPECT_THAT([&] { pack_codes(backend, codes, bits, out); },
                  ThrowsMessage<Error>(HasSubstr("the code at position 30000 does not fit")));
      codes[30000] = 3;
      pack_codes(backend, codes, bits, out);
      std::vector<std::uint8_t> back(codes.size());
      EXPECT_THAT([&] { unpack_codes(backend, out, bits, 3, back); },
                  ThrowsMessage<Error>(HasSubstr("code 3 at position 30000 is not below 3")));
      EXPECT_THAT([&] { unpack_codes(backend, std::span(out).first(out.size() - 1), bits, 4, back); },
                  ThrowsMessage<Error>(HasSubstr("malformed payload")));
    }
    std::vector<std::byte> padded = {std::byte{0x40}};  // 3 codes of 2 bits use 6 bits; bit 6 is set
    std::vector<std::uint8_t> three(3);
    EXPECT_THAT([&] { unpack_codes(backend, padded, 2, 4, three); },
                ThrowsMessage<Error>(HasSubstr("padding bits of the last byte are set")));
  }
}

TEST(PackCodes, CudaRefusedWhereItCannotRun) {
  std::vector<std::int64_t> indices(2);
  std::vector<std::uint8_t> codes(2);
  std::vector<std::byte> bytes(3);
  expect_refused_on_cuda([&] { pack_12bit(Backend::Cuda, indices, bytes); }, "pack_12bit");
  expect_refused_on_cuda([&] { unpack_12bit(Backend::Cuda, bytes, 4096, indices); }, "unpack_12bit");
  expect_refused_on_cuda([&] { pack_codes(Backend::Cuda, codes, 8, std::span(bytes).first(2)); }, "pack_codes");
  expect_refused_on_cuda([&] { unpack_codes(Backend::Cuda, std::span(bytes).first(2), 8, 256, codes); },
                         "unpack_codes");
}

}  // namespace
}  // namespace lowcomm::kernels
