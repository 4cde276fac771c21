#include "lowcomm/kernels/topk.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "kernel_test_support.hpp"
#include "support/sanitized.hpp"
#include "lowcomm/error.hpp"
#include "lowcomm/kernels/elementwise.hpp"

namespace lowcomm::kernels {
namespace {

using test::expect_bitwise_equal;
using test::expect_error;
using test::expect_refused_on_cuda;
using test::uniform_values;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

// Values from a small set, so that most magnitudes tie, with both zeros, infinities and NaNs
// of both signs.
std::vector<float> tied_values(std::size_t n, std::uint64_t seed) {
  static const float pool[] = {-2.0f, -1.0f, -0.5f, -0.0f, 0.0f, 0.5f, 1.0f, 2.0f,
                               3.0f,  -3.0f, kInf,  -kInf, kNaN, -kNaN};
  std::mt19937_64 rng(seed);
  // Mostly small magnitudes, so that the specials are rare and k cuts through ties.
  std::discrete_distribution<int> pick({30, 30, 30, 20, 20, 30, 30, 30, 3, 3, 1, 1, 1, 1});
  std::vector<float> v(n);
  for (float& x : v) x = pool[pick(rng)];
  return v;
}

// The selection order, written independently of the kernels: NaN beats everything, then |v|,
// then the lower index.
bool before(float a, std::int64_t ia, float b, std::int64_t ib) {
  const bool nan_a = std::isnan(a);
  const bool nan_b = std::isnan(b);
  if (nan_a != nan_b) return nan_a;
  if (!nan_a && std::fabs(a) != std::fabs(b)) return std::fabs(a) > std::fabs(b);
  return ia < ib;
}

// Checks that (indices, selected) is the selection of `values`: in strict selection order,
// values copied from where the indices point, and nothing left out that comes before the last
// one kept. Independent of how the kernel found them.
void expect_valid_selection(std::span<const float> values, std::span<const std::int64_t> indices,
                            std::span<const float> selected) {
  ASSERT_EQ(indices.size(), selected.size());
  const auto n = static_cast<std::int64_t>(values.size());
  std::vector<bool> taken(values.size(), false);
  for (std::size_t j = 0; j < indices.size(); ++j) {
    const std::int64_t i = indices[j];
    ASSERT_GE(i, 0);
    ASSERT_LT(i, n);
    ASSERT_FALSE(taken[i]) << "index " << i << " twice";
    taken[i] = true;
    ASSERT_EQ(std::bit_cast<std::uint32_t>(selected[j]), std::bit_cast<std::uint32_t>(values[i]));
    if (j > 0) {
      ASSERT_TRUE(before(values[indices[j - 1]], indices[j - 1], values[i], i)) << "at " << j;
    }
  }
  const std::int64_t last = indices.back();
  for (std::int64_t i = 0; i < n; ++i) {
    if (!taken[i]) {
      ASSERT_FALSE(before(values[i], i, values[last], last)) << "missed " << i;
    }
  }
}

void expect_bitwise_equal(const std::vector<std::int64_t>& ia, const std::vector<float>& va,
                          const std::vector<std::int64_t>& ib, const std::vector<float>& vb) {
  ASSERT_EQ(ia, ib);
  ASSERT_EQ(va.size(), vb.size());
  for (std::size_t j = 0; j < va.size(); ++j) {
    ASSERT_EQ(std::bit_cast<std::uint32_t>(va[j]), std::bit_cast<std::uint32_t>(vb[j])) << j;
  }
}

TEST(TopkGlobal, KnownOrderWithSpecialValues) {
  //                              0     1     2     3     4      5     6     7      8     9
  const std::vector<float> v = {1.0f, -3.0f, 3.0f, 0.0f, -0.0f, kNaN, 2.0f, -kNaN, kInf, -kInf};
  const std::vector<std::int64_t> order = {5, 7, 8, 9, 1, 2, 6, 0, 3, 4};
  for (Backend backend : {Backend::Reference, Backend::Cpu}) {
    for (std::int64_t k = 1; k <= 10; ++k) {
      std::vector<std::int64_t> idx(k);
      std::vector<float> sel(k);
      topk_global(backend, v, k, idx, sel);
      for (std::int64_t j = 0; j < k; ++j) {
        EXPECT_EQ(idx[j], order[j]) << to_string(backend) << " k=" << k << " j=" << j;
        EXPECT_EQ(std::bit_cast<std::uint32_t>(sel[j]),
                  std::bit_cast<std::uint32_t>(v[order[j]]));
      }
    }
  }
}

TEST(TopkPerBlock, KnownOrderAndClampedK) {
  const std::vector<float> v = {1.0f, 2.0f, -3.0f, 3.0f, -3.0f, 1.0f};
  for (Backend backend : {Backend::Reference, Backend::Cpu}) {
    std::vector<std::int64_t> idx(4);
    std::vector<float> sel(4);
    topk_per_block(backend, v, 3, 2, idx, sel);
    EXPECT_EQ(idx, (std::vector<std::int64_t>{2, 1, 0, 1}));
    EXPECT_EQ(sel, (std::vector<float>{-3.0f, 2.0f, 3.0f, -3.0f}));
    for (std::int64_t k : {0, -7}) {  // clamped up to 1
      std::vector<std::int64_t> one(2);
      std::vector<float> one_value(2);
      topk_per_block(backend, v, 3, k, one, one_value);
      EXPECT_EQ(one, (std::vector<std::int64_t>{2, 0}));
    }
    std::vector<std::int64_t> all(6);  // k above the block size: clamped down to 3
    std::vector<float> all_values(6);
    topk_per_block(backend, v, 3, 99, all, all_values);
    EXPECT_EQ(all, (std::vector<std::int64_t>{2, 1, 0, 0, 1, 2}));
    std::vector<std::int64_t> none;  // no blocks, nothing to do
    std::vector<float> none_values;
    topk_per_block(backend, std::span<const float>(), 3, 2, none, none_values);
  }
}

TEST(TopkGlobal, CpuMatchesReferenceBitwise) {
  std::uint64_t seed = 1;
  const std::vector<std::size_t> sizes = lowcomm::test::unless_sanitized<std::vector<std::size_t>>(
      {1, 2, 7, 13, 97, 4096, 32771, 50257, 65536, 200003}, {1, 2, 7, 13, 97, 4096, 32771});
  for (int threads : {1, 2, 3, 5}) {
    omp_set_num_threads(threads);
    for (std::size_t n : sizes) {
      const auto sn = static_cast<std::int64_t>(n);
      for (std::int64_t k : {std::int64_t{1}, std::int64_t{2}, std::int64_t{32}, sn / 2, sn - 1,
                             sn, sn + 5}) {
        for (bool tied : {true, false}) {
          const std::vector<float> v = tied ? tied_values(n, seed) : uniform_values(n, seed);
          ++seed;
          const auto kept = static_cast<std::size_t>(std::clamp<std::int64_t>(k, 1, sn));
          std::vector<std::int64_t> ref_idx(kept), cpu_idx(kept);
          std::vector<float> ref_val(kept), cpu_val(kept);
          topk_global(Backend::Reference, v, k, ref_idx, ref_val);
          topk_global(Backend::Cpu, v, k, cpu_idx, cpu_val);
          SCOPED_TRACE(::testing::Message() << "threads " << threads << " n " << n << " k " << k);
          expect_valid_selection(v, ref_idx, ref_val);
          expect_bitwise_equal(ref_idx, ref_val, cpu_idx, cpu_val);
        }
      }
    }
  }
  omp_set_num_threads(omp_get_num_procs());
}

TEST(TopkGlobal, LargeInput) {
  const std::size_t n = 1000000;
  const std::vector<float> v = tied_values(n, 77);
  for (std::int64_t k : {1, 1000, 1000000}) {
    const auto kept = static_cast<std::size_t>(k);
    std::vector<std::int64_t> ref_idx(kept), cpu_idx(kept);
    std::vector<float> ref_val(kept), cpu_val(kept);
    topk_global(Backend::Reference, v, k, ref_idx, ref_val);
    topk_global(Backend::Cpu, v, k, cpu_idx, cpu_val);
    expect_valid_selection(v, ref_idx, ref_val);
    expect_bitwise_equal(ref_idx, ref_val, cpu_idx, cpu_val);
  }
}

// An all-zero gradient (a frozen layer) ties every entry: the lowest indices win, and the Cpu
// backend prunes its candidates as it goes instead of holding one per entry.
TEST(TopkGlobal, AllEqualKeysSelectTheLowestIndices) {
  for (const float zero : {0.0f, -0.0f}) {
    std::vector<float> v(1 << 20, zero);
    v[700000] = -1.0f;  // one larger entry, far in
    for (std::int64_t k : {1, 5, 70000}) {
      const auto kept = static_cast<std::size_t>(k);
      std::vector<std::int64_t> ref_idx(kept), cpu_idx(kept);
      std::vector<float> ref_val(kept), cpu_val(kept);
      topk_global(Backend::Reference, v, k, ref_idx, ref_val);
      topk_global(Backend::Cpu, v, k, cpu_idx, cpu_val);
      SCOPED_TRACE(::testing::Message() << "k " << k);
      expect_bitwise_equal(ref_idx, ref_val, cpu_idx, cpu_val);
      EXPECT_EQ(cpu_idx[0], 700000);
      if (k > 1) EXPECT_EQ(cpu_idx[1], 0);
    }
  }
}

TEST(TopkPerBlock, CpuMatchesReferenceBitwise) {
  struct Case {
    std::int64_t blocks, block_size;
  };
  const std::vector<Case> cases = lowcomm::test::unless_sanitized<std::vector<Case>>(
      {{1, 1}, {5, 1}, {1, 7}, {11, 13}, {3, 64}, {9, 29}, {40, 4096}, {1733, 29}, {1, 50257}, {15625, 64}},
      {{1, 1}, {5, 1}, {1, 7}, {11, 13}, {3, 64}, {9, 29}, {1733, 29}, {1, 50257}});
  std::uint64_t seed = 1000;
  for (int threads : {1, 2, 3}) {
    omp_set_num_threads(threads);
    for (const Case& c : cases) {
      for (std::int64_t k : {std::int64_t{1}, std::int64_t{2}, std::int64_t{32},
                             c.block_size / 2, c.block_size, c.block_size + 3}) {
        const auto n = static_cast<std::size_t>(c.blocks * c.block_size);
        const std::vector<float> v =
            (seed % 2 == 0) ? tied_values(n, seed) : uniform_values(n, seed);
        ++seed;
        const std::int64_t kept = std::clamp<std::int64_t>(k, 1, c.block_size);
        const auto out = static_cast<std::size_t>(c.blocks * kept);
        std::vector<std::int64_t> ref_idx(out), cpu_idx(out);
        std::vector<float> ref_val(out), cpu_val(out);
        topk_per_block(Backend::Reference, v, c.block_size, k, ref_idx, ref_val);
        topk_per_block(Backend::Cpu, v, c.block_size, k, cpu_idx, cpu_val);
        SCOPED_TRACE(::testing::Message() << "threads " << threads << " blocks " << c.blocks
                                          << " of " << c.block_size << " k " << k);
        for (std::int64_t b = 0; b < c.blocks; b += std::max<std::int64_t>(1, c.blocks / 7)) {
          const auto at = static_cast<std::size_t>(b * kept);
          expect_valid_selection(
              std::span(v).subspan(static_cast<std::size_t>(b * c.block_size),
                                   static_cast<std::size_t>(c.block_size)),
              std::span(ref_idx).subspan(at, static_cast<std::size_t>(kept)),
              std::span(ref_val).subspan(at, static_cast<std::size_t>(kept)));
        }
        expect_bitwise_equal(ref_idx, ref_val, cpu_idx, cpu_val);
      }
    }
  }
  omp_set_num_threads(omp_get_num_procs());
}

// Error feedback's correction formed in top-k's first pass: corrected is scale_add's, bit for bit,
// and the selection topk_global's of it, on each backend and at every thread count, in place too.
TEST(CorrectedTopkGlobal, IsScaleAddThenTopkBitwise) {
  std::uint64_t seed = 500;
  for (const std::size_t n : lowcomm::test::unless_sanitized<std::vector<std::size_t>>({1, 7, 97, 32771, 200003},
                                                                             {1, 7, 97, 32771})) {
    const auto sn = static_cast<std::int64_t>(n);
    for (const std::int64_t k : {std::int64_t{1}, std::int64_t{32}, sn / 2 + 1, sn}) {
      for (const float decay : {1.0f, 0.9f, 0.0f}) {
        const std::vector<float> residual = (seed % 2 == 0) ? tied_values(n, seed) : uniform_values(n, seed);
        const std::vector<float> gradient = uniform_values(n, seed + 7);
        ++seed;
        std::vector<float> expected(n);
        scale_add(Backend::Reference, decay, residual, gradient, expected);
        const auto kept = static_cast<std::size_t>(std::clamp<std::int64_t>(k, 1, sn));
        std::vector<std::int64_t> want_idx(kept);
        std::vector<float> want_val(kept);
        topk_global(Backend::Reference, expected, k, want_idx, want_val);
        // The Reference at one thread; the Cpu at 1 to 3, which cut 200003 values into 1 to 3 ranges.
        for (const auto [backend, threads] : {std::pair{Backend::Reference, 1}, std::pair{Backend::Cpu, 1},
                                              std::pair{Backend::Cpu, 2}, std::pair{Backend::Cpu, 3}}) {
          omp_set_num_threads(threads);
          for (const bool in_place : {false, true}) {
            SCOPED_TRACE(::testing::Message() << to_string(backend) << " threads " << threads << " n " << n << " k "
                                              << k << " decay " << decay << " in place " << in_place);
            std::vector<float> corrected = in_place ? residual : std::vector<float>(n, 123.0f);
            std::vector<std::int64_t> idx(kept);
            std::vector<float> val(kept);
            corrected_topk_global(backend, decay, in_place ? std::span<const float>(corrected) : residual,
                                  gradient, corrected, k, idx, val);
            test::expect_bitwise_equal(corrected, expected);
            expect_bitwise_equal(want_idx, want_val, idx, val);
          }
        }
      }
    }
  }
  omp_set_num_threads(omp_get_num_procs());
}

TEST(TopkErrors, NameTheKernelAndTheProblem) {
  const std::vector<float> v(12, 1.0f);
  std::vector<std::int64_t> idx(8);
  std::vector<float> sel(8);
  std::vector<std::int64_t> idx_short(7);
  std::vector<float> sel_long(9);
  for (Backend backend : {Backend::Reference, Backend::Cpu}) {
    expect_error([&] { topk_per_block(backend, v, 0, 2, idx, sel); }, "topk_per_block",
                 "block_size 0");
    expect_error([&] { topk_per_block(backend, v, -4, 2, idx, sel); }, "topk_per_block",
                 "block_size -4");
    expect_error([&] { topk_per_block(backend, v, 5, 2, idx, sel); }, "topk_per_block",
                 "whole number of blocks of 5");
    expect_error([&] { topk_per_block(backend, v, 3, 2, idx_short, sel); }, "topk_per_block",
                 "exactly 8");
    expect_error([&] { topk_per_block(backend, v, 3, 2, idx, sel_long); }, "topk_per_block",
                 "exactly 8");
    expect_error([&] { topk_global(backend, std::span<const float>(), 2, idx, sel); },
                 "topk_global", "no values");
    expect_error([&] { topk_global(backend, v, 7, idx, sel); }, "topk_global", "exactly 7");
    expect_error([&] { topk_global(backend, v, 99, idx, sel); }, "topk_global", "exactly 12");
  }
  std::vector<float> buffer(24, 1.0f);
  const std::span<float> corrected = std::span(buffer).first(12);
  for (Backend backend : {Backend::Reference, Backend::Cpu}) {
    const std::vector<float> short_gradient(11, 1.0f);
    expect_error([&] { corrected_topk_global(backend, 1.0f, v, short_gradient, corrected, 2, idx, sel); },
                 "corrected_topk_global", "one size, got 12, 11 and 12");
    expect_error([&] { corrected_topk_global(backend, 1.0f, {}, {}, {}, 2, idx, sel); }, "corrected_topk_global",
                 "no values");
    // Overlapping an input without being the residual itself: half a step along the residual.
    expect_error([&] { corrected_topk_global(backend, 1.0f, std::span(buffer).subspan(6, 12), v,
                                             corrected, 8, idx, sel); },
                 "corrected_topk_global", "overlaps an input");
    expect_error([&] { corrected_topk_global(backend, 1.0f, v, corrected, corrected, 8, idx, sel); },
                 "corrected_topk_global", "overlaps an input");
    expect_error([&] { corrected_topk_global(backend, 1.0f, v, v, corrected, 7, idx, sel); },
                 "corrected_topk_global", "exactly 7");
  }
  expect_refused_on_cuda([&] { topk_per_block(Backend::Cuda, v, 3, 2, idx, sel); }, "topk_per_block");
  expect_refused_on_cuda([&] { topk_global(Backend::Cuda, v, 8, idx, sel); }, "topk_global");
}

}  // namespace
}  // namespace lowcomm::kernels
