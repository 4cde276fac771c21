#include "lowcomm/kernels/scatter.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <bit>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "kernel_test_support.hpp"
#include "lowcomm/error.hpp"

namespace lowcomm::kernels {
namespace {

using test::expect_bitwise_equal;
using test::expect_error;
using test::expect_refused_on_cuda;

struct Pairs {
  std::vector<std::int64_t> indices;
  std::vector<float> values;
};

// `m` pairs into `size` slots; a few hot slots take many duplicates, whose float sums depend on
// the order they are added in.
Pairs random_pairs(std::size_t m, std::int64_t size, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::int64_t> slot(0, size - 1);
  std::uniform_int_distribution<std::int64_t> hot(0, std::min<std::int64_t>(size, 5) - 1);
  std::uniform_real_distribution<float> value(-1000.0f, 1000.0f);
  Pairs pairs;
  for (std::size_t p = 0; p < m; ++p) {
    pairs.indices.push_back(rng() % 4 == 0 ? hot(rng) : slot(rng));
    pairs.values.push_back(value(rng) * (rng() % 2 == 0 ? 1e-3f : 1.0f));
  }
  return pairs;
}

TEST(ScatterAdd, DuplicatesAccumulateInOrder) {
  for (Backend backend : {Backend::Reference, Backend::Cpu}) {
    std::vector<float> out = {10, 10, 10, 10};
    scatter_add(backend, std::vector<std::int64_t>{2, 0, 2}, std::vector<float>{1, 2, 3}, out);
    EXPECT_EQ(out, (std::vector<float>{12, 10, 14, 10}));
    // In order, 1 + 1e8 rounds to 1e8 and the slot ends at 0; reversed, it ends at 1.
    std::vector<float> slot = {0.0f};
    scatter_add(backend, std::vector<std::int64_t>{0, 0, 0}, std::vector<float>{1, 1e8f, -1e8f},
                slot);
    EXPECT_EQ(slot[0], 0.0f) << to_string(backend);
  }
}

TEST(ScatterMean, MeansOverTheValuesThatSelectedEachSlot) {
  for (Backend backend : {Backend::Reference, Backend::Cpu}) {
    std::vector<float> out = {10, 10, 10, 10, 10};
    scatter_mean(backend, std::vector<std::int64_t>{2, 0, 2, 4, 2},
                 std::vector<float>{1, 2, 3, -5, 8}, out);
    EXPECT_EQ(out, (std::vector<float>{2, 0, 4, 0, -5})) << to_string(backend);
    std::vector<float> slot = {7.0f};
    scatter_mean(backend, std::vector<std::int64_t>{0, 0, 0}, std::vector<float>{1, 1e8f, -1e8f},
                 slot);
    EXPECT_EQ(slot[0], 0.0f) << to_string(backend);
    std::vector<float> untouched = {3.0f, -1.0f};
    scatter_mean(backend, std::vector<std::int64_t>{}, std::vector<float>{}, untouched);
    EXPECT_EQ(untouched, (std::vector<float>{0.0f, 0.0f}));
  }
}

TEST(Scatter, CpuMatchesReferenceBitwiseAtEveryThreadCount) {
  struct Case {
    std::size_t pairs;
    std::int64_t size;
  };
  const std::vector<Case> cases = {{0, 1},      {1, 1},       {100, 1},      {37, 7},
                                   {1000, 997}, {70001, 13},  {200000, 50257}, {300000, 1000003}};
  std::uint64_t seed = 1;
  for (int threads : {1, 2, 3}) {
    omp_set_num_threads(threads);
    for (const Case& c : cases) {
      SCOPED_TRACE(::testing::Message() << "threads " << threads << " pairs " << c.pairs
                                        << " size " << c.size);
      const Pairs pairs = random_pairs(c.pairs, c.size, seed++);
      std::vector<float> ref(static_cast<std::size_t>(c.size));
      for (std::size_t i = 0; i < ref.size(); ++i) ref[i] = static_cast<float>(i % 17) * 0.37f;
      std::vector<float> cpu = ref;
      scatter_add(Backend::Reference, pairs.indices, pairs.values, ref);
      scatter_add(Backend::Cpu, pairs.indices, pairs.values, cpu);
      expect_bitwise_equal(ref, cpu);
      std::vector<float> ref_mean(ref.size(), 5.0f);
      std::vector<float> cpu_mean(ref.size(), -5.0f);
      scatter_mean(Backend::Reference, pairs.indices, pairs.values, ref_mean);
      scatter_mean(Backend::Cpu, pairs.indices, pairs.values, cpu_mean);
      expect_bitwise_equal(ref_mean, cpu_mean);
    }
  }
  omp_set_num_threads(omp_get_num_procs());
}

// Per-block lists of in-block indices, drawn with duplicates (within a list and across lists).
struct BlockLists {
  std::vector<std::vector<std::int64_t>> indices;
  std::vector<std::vector<float>> values;
  std::vector<BlockPairs> spans() const {
    std::vector<BlockPairs> out;
    for (std::size_t s = 0; s < indices.size(); ++s) out.push_back({indices[s], values[s]});
    return out;
  }
};

BlockLists random_block_lists(std::size_t lists, std::int64_t blocks, std::int64_t block_size, std::int64_t k,
                              std::uint64_t seed) {
  BlockLists l;
  for (std::size_t s = 0; s < lists; ++s) {
    const Pairs pairs = random_pairs(static_cast<std::size_t>(blocks * k), block_size, seed + s);
    l.indices.push_back(pairs.indices);
    l.values.push_back(pairs.values);
  }
  return l;
}

TEST(ScatterMeanPerBlock, CpuMatchesReferenceBitwiseAtEveryThreadCount) {
  struct Case {
    std::size_t lists;
    std::int64_t blocks, block_size, k;
  };
  const std::vector<Case> cases = {{1, 1, 1, 1},   {3, 7, 13, 5},     {2, 144, 4096, 32},
                                   {5, 97, 61, 61}, {1, 33, 4096, 300}, {0, 4, 8, 2}};
  std::uint64_t seed = 1;
  for (int threads : {1, 2, 3}) {
    omp_set_num_threads(threads);
    for (const Case& c : cases) {
      SCOPED_TRACE(::testing::Message() << "threads " << threads << " lists " << c.lists << " blocks "
                                        << c.blocks << " of " << c.block_size << " k " << c.k);
      const BlockLists lists = random_block_lists(c.lists, c.blocks, c.block_size, c.k, seed += 10);
      std::vector<float> ref(static_cast<std::size_t>(c.blocks * c.block_size), 5.0f);
      std::vector<float> cpu(ref.size(), -5.0f);
      scatter_mean_per_block(Backend::Reference, c.block_size, c.k, lists.spans(), ref);
      scatter_mean_per_block(Backend::Cpu, c.block_size, c.k, lists.spans(), cpu);
      expect_bitwise_equal(ref, cpu);
    }
  }
  omp_set_num_threads(omp_get_num_procs());
}

TEST(ScatterMeanPerBlock, IsScatterMeanOverAbsoluteIndices) {
  // Two lists, two blocks of 3, k = 2: list 0 picks (block 0: 2, 0) (block 1: 1, 1);
  // list 1 picks (block 0: 2, 1) (block 1: 0, 2).
  const std::vector<std::int64_t> i0 = {2, 0, 1, 1}, i1 = {2, 1, 0, 2};
  const std::vector<float> v0 = {1.0f, 2.0f, 3.0f, 4.0f}, v1 = {5.0f, 6.0f, 7.0f, 8.0f};
  const std::vector<BlockPairs> lists = {{i0, v0}, {i1, v1}};
  for (Backend backend : {Backend::Reference, Backend::Cpu}) {
    std::vector<float> out(6, 9.0f);
    scatter_mean_per_block(backend, 3, 2, lists, out);
    EXPECT_EQ(out, (std::vector<float>{2.0f, 6.0f, 3.0f, 7.0f, 3.5f, 8.0f})) << to_string(backend);
  }
}

TEST(ScatterMeanPerBlock, RejectsMalformedListsLeavingOutAlone) {
  const std::vector<std::int64_t> good = {0, 1}, bad = {0, 3};
  const std::vector<float> values = {1.0f, 2.0f}, short_values = {1.0f};
  for (Backend backend : {Backend::Reference, Backend::Cpu}) {
    std::vector<float> out(6, 9.0f);
    const std::vector<BlockPairs> outside = {{good, values}, {bad, values}};
    expect_error([&] { scatter_mean_per_block(backend, 3, 1, outside, out); },
                 "list 1: index 3 (at position 1) is outside [0, 3)");
    const std::vector<BlockPairs> mismatched = {{good, short_values}};
    expect_error([&] { scatter_mean_per_block(backend, 3, 1, mismatched, out); },
                 "list 0 has 2 indices and 1 values");
    expect_error([&] { scatter_mean_per_block(backend, 4, 1, std::vector<BlockPairs>{}, out); },
                 "not a whole number of blocks of 4");
    expect_error([&] { scatter_mean_per_block(backend, 3, 0, std::vector<BlockPairs>{}, out); },
                 "block_size 3 and k 0 must be >= 1");
    EXPECT_EQ(out, std::vector<float>(6, 9.0f));
  }
}

TEST(ScatterErrors, NameTheKernelTheIndexAndTheSize) {
  const std::vector<float> original = {1, 2, 3};
  const std::vector<float> values = {1, 1, 1};
  for (Backend backend : {Backend::Reference, Backend::Cpu}) {
    std::vector<float> out = original;
    expect_error([&] { scatter_add(backend, std::vector<std::int64_t>{0, 1}, values, out); },
                 "scatter_add", "2 indices but 3 values");
    expect_error([&] { scatter_mean(backend, std::vector<std::int64_t>{0, 1}, values, out); },
                 "scatter_mean", "2 indices but 3 values");
    expect_error([&] { scatter_add(backend, std::vector<std::int64_t>{0, 3, -1}, values, out); },
                 "scatter_add", "index 3 (at position 1) is outside [0, 3)");
    expect_error([&] { scatter_add(backend, std::vector<std::int64_t>{0, 2, -1}, values, out); },
                 "scatter_add", "index -1 (at position 2) is outside [0, 3)");
    expect_error([&] { scatter_mean(backend, std::vector<std::int64_t>{1, 2, 3}, values, out); },
                 "scatter_mean", "index 3 (at position 2) is outside [0, 3)");
    std::vector<float> empty;
    expect_error([&] { scatter_mean(backend, std::vector<std::int64_t>{0, 0, 0}, values, empty); },
                 "scatter_mean", "outside [0, 0)");
    EXPECT_EQ(out, original) << "a rejected call must not write";
  }
  std::vector<float> out = original;
  const std::vector<std::int64_t> indices = {0, 1, 2};
  expect_refused_on_cuda([&] { scatter_add(Backend::Cuda, indices, values, out); }, "scatter_add");
  expect_refused_on_cuda([&] { scatter_mean(Backend::Cuda, indices, values, out); }, "scatter_mean");
}

// The check of the indices runs on the backend (first_outside): on random inputs of awkward
// sizes, with culprits above and below the range, the first one is named, as a plain loop finds it.
TEST(ScatterErrors, NameTheFirstCulpritOnRandomInputs) {
  std::mt19937_64 rng(11);
  for (const std::size_t n : {1u, 7u, 64u, 1001u, 65537u}) {
    for (int trial = 0; trial < 4; ++trial) {
      const std::int64_t size = 1 + static_cast<std::int64_t>(rng() % 97);
      Pairs pairs = random_pairs(n, size, rng());
      const std::size_t culprits = 1 + rng() % 3;
      for (std::size_t c = 0; c < culprits; ++c) {
        pairs.indices[rng() % n] = rng() % 2 ? size + static_cast<std::int64_t>(rng() % 5) : -1 - static_cast<std::int64_t>(rng() % 5);
      }
      std::size_t first = 0;
      while (pairs.indices[first] >= 0 && pairs.indices[first] < size) ++first;
      const std::string expected = "index " + std::to_string(pairs.indices[first]) + " (at position " +
                                   std::to_string(first) + ") is outside [0, " + std::to_string(size) + ")";
      for (Backend backend : {Backend::Reference, Backend::Cpu}) {
        std::vector<float> out(static_cast<std::size_t>(size), 2.0f);
        expect_error([&] { scatter_add(backend, pairs.indices, pairs.values, out); }, "scatter_add", expected);
        expect_error([&] { scatter_divided(backend, pairs.indices, pairs.values, 2.0f, out); }, "scatter_divided",
                     expected);
        EXPECT_EQ(out, std::vector<float>(static_cast<std::size_t>(size), 2.0f)) << "a rejected call must not write";
      }
    }
  }
}

// Random-k's loops: gather reads the chosen slots; scatter_divided writes them over zeros, a later
// pair replacing an earlier one, dividing in float (divisor 1 keeps -0 and every bit).
TEST(Gather, ReadsTheGivenSlotsAndChecksThem) {
  const std::vector<float> source{1.5f, -0.0f, 3.0f, 4.0f};
  const std::vector<std::int64_t> indices{3, 1, 3};
  for (Backend backend : {Backend::Reference, Backend::Cpu}) {
    std::vector<float> out(3);
    gather(backend, indices, source, out);
    expect_bitwise_equal(out, {4.0f, -0.0f, 4.0f});
    const std::vector<std::int64_t> bad{0, 4};
    std::vector<float> two(2);
    expect_error([&] { gather(backend, bad, source, two); }, "gather", "index 4 (at position 1) is outside [0, 4)");
  }
}

TEST(ScatterDivided, OverwritesWithZerosAndTheLastPairPerSlot) {
  const std::vector<std::int64_t> indices{2, 0, 2};
  const std::vector<float> values{6.0f, -0.0f, 9.0f};
  for (Backend backend : {Backend::Reference, Backend::Cpu}) {
    std::vector<float> out(4, 5.0f);
    scatter_divided(backend, indices, values, 3.0f, out);
    expect_bitwise_equal(out, {-0.0f, 0.0f, 3.0f, 0.0f});
    std::vector<float> copy(4, 5.0f);
    scatter_divided(backend, indices, values, 1.0f, copy);
    expect_bitwise_equal(copy, {-0.0f, 0.0f, 9.0f, 0.0f});
    expect_error([&] { scatter_divided(backend, indices, values, 1.0f, std::span<float>(copy).first(2)); },
                 "scatter_divided", "index 2 (at position 0) is outside [0, 2)");
  }
}

}  // namespace
}  // namespace lowcomm::kernels
