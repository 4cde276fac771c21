// 1-bit values: the exact bit layout, −0.0 and ±inf, Cpu against Reference on awkward sizes
// (past the OpenMP threshold included) and every error path.
#include <cmath>
#include <cstddef>
#include <limits>
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
constexpr float kInf = std::numeric_limits<float>::infinity();

std::vector<float> random_values(std::size_t count, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  std::vector<float> values(count);
  for (auto& v : values) v = normal(rng);
  return values;
}

TEST(PackedSignBytes, IsCountOverEightRoundedUp) {
  EXPECT_EQ(packed_sign_bytes(0), 0u);
  EXPECT_EQ(packed_sign_bytes(1), 1u);
  EXPECT_EQ(packed_sign_bytes(8), 1u);
  EXPECT_EQ(packed_sign_bytes(9), 2u);
  EXPECT_EQ(packed_sign_bytes(1031), 129u);
}

TEST(PackSigns, SetsLeastSignificantBitFirstAndCountsMinusZeroAsNegative) {
  const std::vector<float> values = {-1.0f, 2.0f, -0.0f, 0.0f, -kInf, kInf, 3.0f, -4.0f, -5.0f};
  for (Backend backend : kBackends) {
    std::vector<std::byte> out(2, std::byte{0xFF});
    pack_signs(backend, values, out);
    EXPECT_EQ(out[0], std::byte{0x95}) << to_string(backend);
    EXPECT_EQ(out[1], std::byte{0x01}) << to_string(backend);
    std::vector<float> decoded(values.size());
    unpack_signs(backend, out, decoded);
    for (std::size_t i = 0; i < values.size(); ++i) {
      EXPECT_EQ(decoded[i], std::signbit(values[i]) ? -1.0f : 1.0f) << i;
    }
  }
}

TEST(PackSigns, CpuMatchesReferenceAndRoundTrips) {
  for (std::size_t count : {0, 1, 7, 8, 9, 1031, 100003}) {
    const auto values = random_values(count, 3 + static_cast<unsigned>(count));
    std::vector<std::byte> reference(packed_sign_bytes(count));
    std::vector<std::byte> cpu(reference.size(), std::byte{0xFF});
    pack_signs(Backend::Reference, values, reference);
    pack_signs(Backend::Cpu, values, cpu);
    ASSERT_EQ(cpu, reference) << count;
    for (Backend backend : kBackends) {
      std::vector<float> decoded(count);
      unpack_signs(backend, reference, decoded);
      for (std::size_t i = 0; i < count; ++i) {
        ASSERT_EQ(decoded[i], values[i] < 0 ? -1.0f : 1.0f) << to_string(backend) << " " << i;
      }
    }
  }
}

TEST(PackSigns, RejectsNaNNamingTheFirst) {
  for (Backend backend : kBackends) {
    auto values = random_values(100003, 5);
    values[77777] = std::numeric_limits<float>::quiet_NaN();
    values[99999] = -std::numeric_limits<float>::quiet_NaN();
    std::vector<std::byte> out(packed_sign_bytes(values.size()));
    EXPECT_THAT([&] { pack_signs(backend, values, out); },
                ThrowsMessage<Error>(HasSubstr("value 77777 is NaN")));
  }
}

TEST(PackSigns, RejectsAWrongOutputSize) {
  const std::vector<float> values(9, 1.0f);
  for (Backend backend : kBackends) {
    for (std::size_t size : {1, 3}) {
      std::vector<std::byte> out(size);
      EXPECT_THAT([&] { pack_signs(backend, values, out); },
                  ThrowsMessage<Error>(HasSubstr("9 values need 2")));
    }
  }
}

TEST(UnpackSigns, RejectsTruncatedOrOverlongPayloads) {
  std::vector<float> out(9);
  for (Backend backend : kBackends) {
    for (std::size_t size : {0, 1, 3}) {
      std::vector<std::byte> in(size);
      EXPECT_THAT([&] { unpack_signs(backend, in, out); },
                  ThrowsMessage<Error>(HasSubstr("malformed payload")));
    }
  }
}

TEST(UnpackSigns, RejectsSetPaddingBits) {
  std::vector<float> out(9);
  for (Backend backend : kBackends) {
    std::vector<std::byte> in = {std::byte{0xFF}, std::byte{0x03}};
    EXPECT_THAT([&] { unpack_signs(backend, in, out); },
                ThrowsMessage<Error>(HasSubstr("padding bits")));
    in[1] = std::byte{0x01};
    EXPECT_NO_THROW(unpack_signs(backend, in, out));
  }
}

TEST(PackSigns, CudaRefusedWhereItCannotRun) {
  std::vector<float> values(1);
  std::vector<std::byte> bytes(1);
  expect_refused_on_cuda([&] { pack_signs(Backend::Cuda, values, bytes); }, "pack_signs");
  expect_refused_on_cuda([&] { unpack_signs(Backend::Cuda, bytes, values); }, "unpack_signs");
}

}  // namespace
}  // namespace lowcomm::kernels
