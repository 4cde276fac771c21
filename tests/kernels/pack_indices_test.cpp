// Index packing: the widths' boundaries, the exact little-endian bytes, Cpu against Reference on
// awkward sizes (one past the OpenMP threshold included) and every error path.
#include <cstddef>
#include <cstdint>
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

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

constexpr Backend kBackends[] = {Backend::Reference, Backend::Cpu};
constexpr IndexWidth kWidths[] = {IndexWidth::U8, IndexWidth::U16, IndexWidth::U32,
                                  IndexWidth::I64};
constexpr std::size_t kSizes[] = {0, 1, 7, 13, 1009, 100003};

std::uint64_t width_max(IndexWidth width) {
  return width == IndexWidth::I64 ? std::numeric_limits<std::int64_t>::max()
                                  : (std::uint64_t{1} << (8 * static_cast<int>(width))) - 1;
}

std::vector<std::int64_t> random_indices(std::size_t count, std::uint64_t max, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::uint64_t> pick(0, max);
  std::vector<std::int64_t> indices(count);
  for (auto& index : indices) index = static_cast<std::int64_t>(pick(rng));
  return indices;
}

TEST(SmallestIndexWidth, PicksTheSmallestWidthAtEachBoundary) {
  EXPECT_EQ(smallest_index_width(0), IndexWidth::U8);
  EXPECT_EQ(smallest_index_width(256), IndexWidth::U8);
  EXPECT_EQ(smallest_index_width(257), IndexWidth::U16);
  EXPECT_EQ(smallest_index_width(65536), IndexWidth::U16);
  EXPECT_EQ(smallest_index_width(65537), IndexWidth::U32);
  EXPECT_EQ(smallest_index_width(std::uint64_t{1} << 32), IndexWidth::U32);
  EXPECT_EQ(smallest_index_width((std::uint64_t{1} << 32) + 1), IndexWidth::I64);
  EXPECT_EQ(smallest_index_width(std::numeric_limits<std::uint64_t>::max()), IndexWidth::I64);
}

TEST(PackedIndexBytes, IsCountTimesWidthAndRejectsOverflowAndBadWidths) {
  EXPECT_EQ(packed_index_bytes(0, IndexWidth::I64), 0u);
  EXPECT_EQ(packed_index_bytes(5, IndexWidth::U8), 5u);
  EXPECT_EQ(packed_index_bytes(5, IndexWidth::U16), 10u);
  EXPECT_EQ(packed_index_bytes(5, IndexWidth::U32), 20u);
  EXPECT_EQ(packed_index_bytes(5, IndexWidth::I64), 40u);
  const std::size_t too_many = std::numeric_limits<std::size_t>::max() / 2;
  EXPECT_THAT([&] { packed_index_bytes(too_many, IndexWidth::U32); },
              ThrowsMessage<Error>(HasSubstr("overflow")));
  EXPECT_THAT([] { packed_index_bytes(1, static_cast<IndexWidth>(3)); },
              ThrowsMessage<Error>(HasSubstr("invalid index width 3")));
}

TEST(PackIndices, WritesLittleEndianBytes) {
  const std::vector<std::int64_t> indices = {0x01, 0x1234, 0xFFFF};
  for (Backend backend : kBackends) {
    std::vector<std::byte> out(6);
    pack_indices(backend, indices, IndexWidth::U16, out);
    const std::vector<std::byte> want = {std::byte{0x01}, std::byte{0x00}, std::byte{0x34},
                                         std::byte{0x12}, std::byte{0xFF}, std::byte{0xFF}};
    EXPECT_EQ(out, want) << to_string(backend);

    std::vector<std::byte> wide(8);
    pack_indices(backend, std::vector<std::int64_t>{0x0102030405060708}, IndexWidth::I64, wide);
    for (int b = 0; b < 8; ++b) EXPECT_EQ(wide[b], std::byte(8 - b)) << to_string(backend);
  }
}

TEST(PackIndices, CpuMatchesReferenceAndRoundTrips) {
  for (IndexWidth width : kWidths) {
    for (std::size_t count : kSizes) {
      const auto indices = random_indices(count, width_max(width), 11 + count);
      std::vector<std::byte> reference(packed_index_bytes(count, width));
      std::vector<std::byte> cpu(reference.size(), std::byte{0xAB});
      pack_indices(Backend::Reference, indices, width, reference);
      pack_indices(Backend::Cpu, indices, width, cpu);
      ASSERT_EQ(cpu, reference) << "width " << static_cast<int>(width) << " count " << count;
      for (Backend backend : kBackends) {
        std::vector<std::int64_t> decoded(count, -1);
        unpack_indices(backend, reference, width, width_max(width) + 1, decoded);
        ASSERT_EQ(decoded, indices) << to_string(backend) << " width "
                                    << static_cast<int>(width) << " count " << count;
      }
    }
  }
}

TEST(PackIndices, RejectsIndicesThatDoNotFitNamingTheFirst) {
  for (Backend backend : kBackends) {
    for (IndexWidth width : kWidths) {
      std::vector<std::int64_t> indices(100003, 1);
      indices[70001] = -1;
      indices[90000] = -5;
      std::vector<std::byte> out(packed_index_bytes(indices.size(), width));
      EXPECT_THAT([&] { pack_indices(backend, indices, width, out); },
                  ThrowsMessage<Error>(AllOf(HasSubstr("index -1 at position 70001"),
                                             HasSubstr("pack_indices"))));
      if (width == IndexWidth::I64) continue;
      indices[70001] = static_cast<std::int64_t>(width_max(width)) + 1;
      EXPECT_THAT([&] { pack_indices(backend, indices, width, out); },
                  ThrowsMessage<Error>(HasSubstr("at position 70001 does not fit")));
    }
  }
}

TEST(PackIndices, RejectsAWrongOutputSize) {
  const std::vector<std::int64_t> indices = {1, 2, 3};
  for (Backend backend : kBackends) {
    std::vector<std::byte> short_out(5);
    std::vector<std::byte> long_out(7);
    EXPECT_THAT([&] { pack_indices(backend, indices, IndexWidth::U16, short_out); },
                ThrowsMessage<Error>(HasSubstr("output holds 5 bytes")));
    EXPECT_THAT([&] { pack_indices(backend, indices, IndexWidth::U16, long_out); },
                ThrowsMessage<Error>(HasSubstr("output holds 7 bytes")));
  }
}

TEST(UnpackIndices, RejectsTruncatedOrOverlongPayloads) {
  for (Backend backend : kBackends) {
    for (IndexWidth width : kWidths) {
      const std::size_t bytes = packed_index_bytes(4, width);
      std::vector<std::int64_t> out(4);
      for (std::size_t size : {std::size_t{0}, bytes - 1, bytes + 1}) {
        std::vector<std::byte> in(size);
        EXPECT_THAT([&] { unpack_indices(backend, in, width, 1000, out); },
                    ThrowsMessage<Error>(HasSubstr("malformed payload")));
      }
    }
  }
}

TEST(UnpackIndices, RejectsIndicesAtOrBeyondTheLimitNamingTheFirst) {
  for (Backend backend : kBackends) {
    std::vector<std::int64_t> indices(100003, 9);
    indices[80000] = 10;
    indices[90000] = 200;
    std::vector<std::byte> in(indices.size());
    pack_indices(backend, indices, IndexWidth::U8, in);
    std::vector<std::int64_t> out(indices.size());
    EXPECT_THAT([&] { unpack_indices(backend, in, IndexWidth::U8, 10, out); },
                ThrowsMessage<Error>(HasSubstr("index 10 at position 80000 is not below the "
                                               "limit 10")));
    EXPECT_NO_THROW(unpack_indices(backend, in, IndexWidth::U8, 201, out));
    EXPECT_THAT([&] { unpack_indices(backend, in, IndexWidth::U8, 0, out); },
                ThrowsMessage<Error>(HasSubstr("at position 0")));
  }
}

TEST(UnpackIndices, RejectsI64ValuesThatAreNegativeAsInt64) {
  std::vector<std::byte> in(8, std::byte{0xFF});
  std::vector<std::int64_t> out(1);
  for (Backend backend : kBackends) {
    EXPECT_THAT(
        [&] {
          unpack_indices(backend, in, IndexWidth::I64, std::numeric_limits<std::uint64_t>::max(),
                         out);
        },
        ThrowsMessage<Error>(HasSubstr("index 18446744073709551615 at position 0")));
  }
}

TEST(PackIndices, CudaRefusedWhereItCannotRun) {
  std::vector<std::int64_t> indices(1);
  std::vector<std::byte> bytes(1);
  expect_refused_on_cuda([&] { pack_indices(Backend::Cuda, indices, IndexWidth::U8, bytes); }, "pack_indices");
  expect_refused_on_cuda([&] { unpack_indices(Backend::Cuda, bytes, IndexWidth::U8, 1, indices); }, "unpack_indices");
}

}  // namespace
}  // namespace lowcomm::kernels
