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
  expect_error([&] { scatter_add(Backend::Cuda, indices, values, out); }, "scatter_add", "cuda");
  expect_error([&] { scatter_mean(Backend::Cuda, indices, values, out); }, "scatter_mean", "cuda");
}

}  // namespace
}  // namespace lowcomm::kernels
