// The fused DeMo kernels are exactly the two kernels they fuse, run in sequence on the same
// backend: bitwise, for Reference and Cpu, at 1-3 threads, on layouts that take the Cpu's
// per-block loops and its chunked products (primes, width 1, batches, k above the block size).
#include "lowcomm/kernels/dct_topk.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "kernel_test_support.hpp"
#include "lowcomm/kernels/dct.hpp"
#include "lowcomm/kernels/topk.hpp"

namespace lowcomm::kernels {
namespace {

using test::expect_bitwise_equal;
using test::expect_error;
using test::uniform_values;

struct Case {
  std::vector<std::int64_t> shape;
  std::int64_t chunk, k;
};

const std::vector<Case> kCases = {
    {{1}, 64, 1},          {{13}, 64, 3},        {{7, 11}, 4, 2},          {{768}, 64, 32},
    {{96, 768}, 64, 32},   {{3, 130, 97}, 64, 5}, {{256, 1}, 64, 300},     {{1, 4096}, 64, 32},
    {{384, 192}, 32, 17},  {{509, 64}, 64, 64},
};

TEST(DctTopk, EncodeIsDctThenTopkBitwise) {
  std::uint64_t seed = 3;
  for (int threads : {1, 2, 3}) {
    omp_set_num_threads(threads);
    for (const Case& c : kCases) {
      SCOPED_TRACE(::testing::Message() << "threads " << threads << " shape[0] " << c.shape[0] << " dims "
                                        << c.shape.size() << " chunk " << c.chunk << " k " << c.k);
      const BlockLayout layout = block_layout(c.shape, c.chunk);
      const std::vector<float> x = uniform_values(static_cast<std::size_t>(layout.size()), seed++);
      const std::int64_t kept = std::clamp<std::int64_t>(c.k, 1, layout.block_size());
      const auto entries = static_cast<std::size_t>(layout.blocks() * kept);
      for (Backend backend : {Backend::Reference, Backend::Cpu}) {
        std::vector<float> coefficients(x.size());
        dct_encode_blocks(backend, layout, x, coefficients);
        std::vector<std::int64_t> want_idx(entries), got_idx(entries);
        std::vector<float> want_val(entries), got_val(entries);
        topk_per_block(backend, coefficients, layout.block_size(), c.k, want_idx, want_val);
        dct_topk_per_block(backend, layout, x, c.k, got_idx, got_val);
        ASSERT_EQ(got_idx, want_idx) << to_string(backend);
        expect_bitwise_equal(want_val, got_val);
      }
    }
  }
  omp_set_num_threads(omp_get_num_procs());
}

TEST(DctTopk, DecodeIsScatterMeanThenInverseDctBitwise) {
  std::uint64_t seed = 50;
  for (int threads : {1, 2, 3}) {
    omp_set_num_threads(threads);
    for (const Case& c : kCases) {
      for (std::size_t lists : {std::size_t{1}, std::size_t{3}}) {
        SCOPED_TRACE(::testing::Message() << "threads " << threads << " shape[0] " << c.shape[0] << " chunk "
                                          << c.chunk << " k " << c.k << " lists " << lists);
        const BlockLayout layout = block_layout(c.shape, c.chunk);
        std::mt19937_64 rng(seed++);
        std::uniform_int_distribution<std::int64_t> slot(0, layout.block_size() - 1);
        std::vector<std::vector<std::int64_t>> indices(lists);
        std::vector<std::vector<float>> values(lists);
        std::vector<BlockPairs> sources;
        for (std::size_t s = 0; s < lists; ++s) {
          for (std::int64_t p = 0; p < layout.blocks() * c.k; ++p) indices[s].push_back(slot(rng));
          values[s] = uniform_values(indices[s].size(), seed++);
          sources.push_back({indices[s], values[s]});
        }
        for (Backend backend : {Backend::Reference, Backend::Cpu}) {
          std::vector<float> coefficients(static_cast<std::size_t>(layout.size()));
          scatter_mean_per_block(backend, layout.block_size(), c.k, sources, coefficients);
          std::vector<float> want(coefficients.size()), got(coefficients.size(), 7.0f);
          dct_decode_blocks(backend, layout, coefficients, want);
          scatter_mean_dct_decode(backend, layout, c.k, sources, got);
          expect_bitwise_equal(want, got);
        }
      }
    }
  }
  omp_set_num_threads(omp_get_num_procs());
}

TEST(DctTopk, RejectsBadArgumentsLeavingTheTensorAlone) {
  const BlockLayout layout = block_layout(std::vector<std::int64_t>{8, 8}, 4);  // 4 blocks of 16
  for (Backend backend : {Backend::Reference, Backend::Cpu}) {
    const std::vector<float> x(64, 1.0f);
    std::vector<std::int64_t> idx(8);
    std::vector<float> val(8);
    expect_error([&] { dct_topk_per_block(backend, layout, std::span(x).first(63), 2, idx, val); },
                 "dct_topk_per_block: the layout has 64 elements but the tensor span has 63");
    expect_error([&] { dct_topk_per_block(backend, layout, x, 3, idx, val); },
                 "must hold exactly 12 entries, got 8 indices and 8 values");
    std::vector<float> tensor(64, 5.0f);
    const std::vector<std::int64_t> bad = {0, 16, 1, 2, 3, 4, 5, 6};
    const std::vector<BlockPairs> sources = {{bad, val}};
    expect_error([&] { scatter_mean_dct_decode(backend, layout, 2, sources, tensor); },
                 "scatter_mean_dct_decode: list 0: index 16 (at position 1) is outside [0, 16)");
    EXPECT_EQ(tensor, std::vector<float>(64, 5.0f));
  }
}

}  // namespace
}  // namespace lowcomm::kernels
