#include "lowcomm/kernels/blocks.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "kernel_test_support.hpp"
#include "lowcomm/error.hpp"

namespace lowcomm::kernels {
namespace {

using test::expect_error;

// The definition, walked the slow way.
std::int64_t brute_block_length(std::int64_t n, std::int64_t chunk) {
  if (n <= chunk) return n;
  for (std::int64_t d = chunk; d >= 1; --d) {
    if (n % d == 0) return d;
  }
  return 1;
}

TEST(BlockLength, ReferenceExamples) {
  EXPECT_EQ(block_length(2048, 64), 64);
  EXPECT_EQ(block_length(50304, 64), 64);
  EXPECT_EQ(block_length(1000, 64), 50);
  EXPECT_EQ(block_length(96, 64), 48);
  EXPECT_EQ(block_length(30, 64), 30);
  EXPECT_EQ(block_length(50257, 64), 29);
  EXPECT_EQ(block_length(32001, 64), 3);
}

TEST(BlockLength, EdgeCases) {
  EXPECT_EQ(block_length(1, 64), 1);
  EXPECT_EQ(block_length(64, 64), 64);
  EXPECT_EQ(block_length(65, 64), 13);
  EXPECT_EQ(block_length(65537, 64), 1);  // prime: degrades to length 1
  EXPECT_EQ(block_length(7, 1), 1);
  EXPECT_EQ(block_length(50257, 2000), 1733);  // chunk above sqrt(n): the partner divisor
  EXPECT_EQ(block_length(std::int64_t{1} << 40, 64), 64);
  EXPECT_EQ(block_length(2147483647, 64), 1);  // a large prime, both search strategies
  EXPECT_EQ(block_length(2147483647, 100000), 1);
}

TEST(BlockLength, MatchesTheDefinitionExhaustively) {
  for (std::int64_t n = 1; n <= 2500; ++n) {
    for (std::int64_t chunk : {1, 2, 3, 5, 7, 16, 50, 64, 100, 1000, 3000}) {
      ASSERT_EQ(block_length(n, chunk), brute_block_length(n, chunk)) << n << " " << chunk;
    }
  }
}

TEST(BlockLength, RejectsNonPositiveArguments) {
  expect_error([] { block_length(0, 64); }, "block_length", "dimension 0");
  expect_error([] { block_length(-3, 64); }, "block_length", "dimension -3");
  expect_error([] { block_length(10, 0); }, "block_length", "chunk 0");
  expect_error([] { block_length(10, -1); }, "block_length", "chunk -1");
}

BlockLayout layout_of(std::vector<std::int64_t> shape, std::int64_t chunk) {
  return block_layout(shape, chunk);
}

TEST(BlockLayout, ScalarsAndVectorsAreOneRow) {
  EXPECT_EQ(layout_of({}, 64), (BlockLayout{1, 1, 1, 1, 1}));
  EXPECT_EQ(layout_of({1}, 64), (BlockLayout{1, 1, 1, 1, 1}));
  const BlockLayout v = layout_of({50257}, 64);
  EXPECT_EQ(v, (BlockLayout{1, 1, 50257, 1, 29}));
  EXPECT_EQ(v.blocks(), 1733);
  EXPECT_EQ(v.block_size(), 29);
  EXPECT_EQ(v.size(), 50257);
  EXPECT_EQ(layout_of({30}, 64), (BlockLayout{1, 1, 30, 1, 30}));
}

TEST(BlockLayout, MatricesBlockRowsAndColumnsIndependently) {
  const BlockLayout m = layout_of({50304, 768}, 64);
  EXPECT_EQ(m, (BlockLayout{1, 50304, 768, 64, 64}));
  EXPECT_EQ(m.blocks(), 786 * 12);
  EXPECT_EQ(m.block_size(), 4096);
  EXPECT_EQ(m.size(), 50304 * 768);
  EXPECT_EQ(layout_of({96, 30}, 64), (BlockLayout{1, 96, 30, 48, 30}));
  EXPECT_EQ(layout_of({7, 13}, 64), (BlockLayout{1, 7, 13, 7, 13}));
  EXPECT_EQ(layout_of({7, 13}, 5), (BlockLayout{1, 7, 13, 1, 1}));
  EXPECT_EQ(layout_of({1000, 2048}, 64).blocks(), 20 * 32);
}

TEST(BlockLayout, LeadingDimensionsBecomeTheBatch) {
  const BlockLayout t = layout_of({3, 4, 8}, 64);
  EXPECT_EQ(t, (BlockLayout{3, 4, 8, 4, 8}));
  EXPECT_EQ(t.blocks(), 3);
  const BlockLayout u = layout_of({2, 3, 96, 30}, 16);
  EXPECT_EQ(u, (BlockLayout{6, 96, 30, 16, 15}));
  EXPECT_EQ(u.blocks(), 6 * 6 * 2);
  EXPECT_EQ(u.size(), 6 * 96 * 30);
}

TEST(BlockLayout, RejectsBadShapes) {
  expect_error([] { layout_of({4, 0, 3}, 64); }, "block_layout", "dimension 1");
  expect_error([] { layout_of({-1}, 64); }, "block_layout", "dimension 0");
  expect_error([] { layout_of({4, 4}, 0); }, "block_layout", "chunk 0");
  const std::int64_t big = std::int64_t{1} << 40;
  expect_error([&] { layout_of({big, big, 1, 1}, 64); }, "block_layout", "int64");
  expect_error([&] { layout_of({big, big}, 64); }, "block_layout", "int64");
}

TEST(CheckBlockLayout, NamesTheKernelAndTheProblem) {
  check_block_layout(BlockLayout{2, 6, 4, 3, 2}, "k");
  expect_error([] { check_block_layout(BlockLayout{0, 6, 4, 3, 2}, "my_kernel"); },
               "my_kernel", "< 1");
  expect_error([] { check_block_layout(BlockLayout{1, 6, 4, 3, -2}, "my_kernel"); },
               "my_kernel", "< 1");
  expect_error([] { check_block_layout(BlockLayout{1, 6, 4, 4, 2}, "my_kernel"); },
               "my_kernel", "does not divide");
  expect_error([] { check_block_layout(BlockLayout{1, 6, 4, 3, 3}, "my_kernel"); },
               "my_kernel", "does not divide");
  const std::int64_t big = std::int64_t{1} << 32;
  expect_error([&] { check_block_layout(BlockLayout{big, big, 2, 1, 1}, "my_kernel"); },
               "my_kernel", "int64");
}

}  // namespace
}  // namespace lowcomm::kernels
