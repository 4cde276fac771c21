#include "lowcomm/kernels/dct.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numbers>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "kernel_test_support.hpp"
#include "support/sanitized.hpp"
#include "lowcomm/error.hpp"

namespace lowcomm::kernels {
namespace {

using test::expect_error;
using test::expect_refused_on_cuda;
using test::uniform_values;

// Where element (row r, col c) of block `block` lives in the row-major tensor, written out
// from the numbering rule (batch, block row, block col) rather than copied from the kernel.
std::size_t tensor_offset(const BlockLayout& l, std::int64_t block, std::int64_t r,
                          std::int64_t c) {
  const std::int64_t block_cols_per_row = l.cols / l.block_cols;
  const std::int64_t blocks_per_matrix = (l.rows / l.block_rows) * block_cols_per_row;
  const std::int64_t batch = block / blocks_per_matrix;
  const std::int64_t block_row = (block % blocks_per_matrix) / block_cols_per_row;
  const std::int64_t block_col = block % block_cols_per_row;
  const std::int64_t row = block_row * l.block_rows + r;
  const std::int64_t col = block_col * l.block_cols + c;
  return static_cast<std::size_t>((batch * l.rows + row) * l.cols + col);
}

// Q = C_h · X · C_wᵀ per block, in double, straight from the definition.
std::vector<double> encode_in_double(const BlockLayout& l, const std::vector<float>& x) {
  const std::int64_t h = l.block_rows;
  const std::int64_t w = l.block_cols;
  const std::vector<float> ch = dct_basis(h);
  const std::vector<float> cw = dct_basis(w);
  std::vector<double> q(x.size());
  for (std::int64_t b = 0; b < l.blocks(); ++b) {
    for (std::int64_t i = 0; i < h; ++i) {
      for (std::int64_t j = 0; j < w; ++j) {
        double sum = 0.0;
        for (std::int64_t r = 0; r < h; ++r) {
          for (std::int64_t c = 0; c < w; ++c) {
            sum += double{ch[i * h + r]} * x[tensor_offset(l, b, r, c)] * cw[j * w + c];
          }
        }
        q[b * h * w + i * w + j] = sum;
      }
    }
  }
  return q;
}

// Frobenius norm of each block of a coefficient-ordered (block-contiguous) buffer.
std::vector<double> block_norms(const BlockLayout& l, const std::vector<float>& blockwise) {
  std::vector<double> norms(static_cast<std::size_t>(l.blocks()));
  for (std::int64_t b = 0; b < l.blocks(); ++b) {
    double sum = 0.0;
    for (std::int64_t e = 0; e < l.block_size(); ++e) {
      const double v = blockwise[b * l.block_size() + e];
      sum += v * v;
    }
    norms[b] = std::sqrt(sum);
  }
  return norms;
}

// Worst case (dct.hpp): each backend's float result is within (h+w)·eps/2·‖X_block‖ of the exact
// transform of the float basis, whatever the summation order, so two backends differ by at most
// (h+w)·eps·‖X_block‖; +2 covers the rounding of the basis itself when comparing with the
// definition in double. Order-independent, so it holds for Reference and Cpu alike.
double tolerance(const BlockLayout& l, double block_norm) {
  const double eps = std::numeric_limits<float>::epsilon();
  return 2.0 * static_cast<double>(l.block_rows + l.block_cols + 2) * eps * block_norm;
}

// What Cpu is held to against Reference. The worst case above is ~sqrt(h·w) times larger than
// real rounding (4e-4·RMS for 64 x 64 blocks) and would let a wrong basis entry through. Each
// output is two float sums over w and h terms, every rounding at most eps/2 of a partial sum no
// larger than the block's RMS plus the output (the basis rows are unit vectors); such errors add
// up like a random walk, so the Cpu - Reference difference is of order
// sqrt(h+w)·eps·(RMS + |expected|). Measured maximum over ~10^7 elements of uniform data: 0.8 of
// that, for every block shape below and up to 1000 x 1000; the factor 4 leaves a margin of five.
// (Same form as the fixtures' 1e-5·(RMS + |expected|) against PyTorch; tighter for blocks up
// to 64 x 64.)
double cpu_tolerance(const BlockLayout& l, double block_norm, double expected) {
  const double eps = std::numeric_limits<float>::epsilon();
  const double rms = block_norm / std::sqrt(static_cast<double>(l.block_size()));
  return 4.0 * std::sqrt(static_cast<double>(l.block_rows + l.block_cols + 2)) * eps *
         (rms + std::fabs(expected));
}

// The decode's: Cpu's stage h is Lee's fast inverse where the block height allows
// (kernels/cpu/fast_dct.hpp), whose rounding is amplified by its factors 1/(2 cos θ) (up to 20 at
// h = 64): measured up to 2.1 times cpu_tolerance (h = 64, w = 1, ~10^5 elements), so held to 3
// times it. A wrong factor or basis entry is off by ~1e-3 of the RMS, 50 times this bound.
double cpu_decode_tolerance(const BlockLayout& l, double block_norm, double expected) {
  return 3.0 * cpu_tolerance(l, block_norm, expected);
}

TEST(DctBasis, MatchesTheFormulaAndTheCheckValue) {
  const std::vector<float> c4 = dct_basis(4);
  ASSERT_EQ(c4.size(), 16u);
  // Reading 1: row 0 of C is the constant 1/sqrt(4).
  for (int n = 0; n < 4; ++n) EXPECT_FLOAT_EQ(c4[n], 0.5f);
  // Reading 2 (REFERENCE.md's check value): the first column of C.
  const float published[] = {0.5f, 0.6533f, 0.5f, 0.2706f};
  const double exact[] = {0.5, std::cos(std::numbers::pi / 8) / std::sqrt(2.0), 0.5,
                          std::cos(3 * std::numbers::pi / 8) / std::sqrt(2.0)};
  for (int k = 0; k < 4; ++k) {
    EXPECT_NEAR(c4[k * 4], published[k], 1e-4) << k;
    EXPECT_NEAR(c4[k * 4], exact[k], 1e-7) << k;
  }
  EXPECT_EQ(dct_basis(1), std::vector<float>{1.0f});
  expect_error([] { dct_basis(0); }, "dct_basis", "length 0");
  expect_error([] { dct_basis(std::int64_t{1} << 40); }, "dct_basis", "int64");
}

TEST(DctBasis, IsOrthonormal) {
  for (std::int64_t c : {1, 2, 3, 4, 7, 13, 29, 48, 64, 100}) {
    const std::vector<float> basis = dct_basis(c);
    for (std::int64_t a = 0; a < c; ++a) {
      for (std::int64_t b = 0; b < c; ++b) {
        double dot = 0.0;
        for (std::int64_t n = 0; n < c; ++n) dot += double{basis[a * c + n]} * basis[b * c + n];
        ASSERT_NEAR(dot, a == b ? 1.0 : 0.0, 1e-6) << "c=" << c << " rows " << a << "," << b;
      }
    }
  }
}

TEST(DctEncode, IdentityCheckValueBothReadings) {
  std::vector<float> identity(16, 0.0f);
  for (int i = 0; i < 4; ++i) identity[i * 5] = 1.0f;
  const float expected_row0[] = {0.5f, 0.6533f, 0.5f, 0.2706f};
  for (Backend backend : {Backend::Reference, Backend::Cpu}) {
    // Each row on its own (1x4 blocks): Q = x · Cᵀ, so row 0 is the first column of C.
    std::vector<float> rows(16);
    dct_encode_blocks(backend, BlockLayout{1, 4, 4, 1, 4}, identity, rows);
    for (int j = 0; j < 4; ++j) EXPECT_NEAR(rows[j], expected_row0[j], 1e-4);
    // The same for a 1-D tensor e0 (Q = C · x).
    std::vector<float> e0 = {1, 0, 0, 0};
    std::vector<float> q(4);
    dct_encode_blocks(backend, block_layout(std::vector<std::int64_t>{4}, 64), e0, q);
    for (int j = 0; j < 4; ++j) EXPECT_NEAR(q[j], expected_row0[j], 1e-4);
    // As one 4x4 block: C · I · Cᵀ = I.
    std::vector<float> block(16);
    dct_encode_blocks(backend, BlockLayout{1, 4, 4, 4, 4}, identity, block);
    for (int e = 0; e < 16; ++e) EXPECT_NEAR(block[e], identity[e], 1e-6) << e;
  }
}

struct Case {
  std::vector<std::int64_t> shape;
  std::int64_t chunk;
};

const std::vector<Case>& cases() {
  static const std::vector<Case> all = {
      {{7, 13}, 64},   {{7, 13}, 5},        {{50257}, 64},        {{1}, 64},
      {{}, 64},        {{96, 30}, 64},      {{96, 30}, 8},        {{3, 4, 8}, 64},
      {{3, 4, 8}, 2},  {{2, 3, 96, 30}, 16}, {{128, 192}, 64},    {{1000}, 64},
      {{64, 64}, 1},   {{17, 1}, 64},       {{1, 1000}, 1000},    {{5, 128, 64}, 32},
      // Large enough for Cpu's matrix products: h = w = 1, h = 1 with several rows, w = 1,
      // odd h and w with a batch, block rows cut into chunks with a shorter last one, and
      // long 1-D blocks.
      {{512, 512}, 1}, {{257, 640}, 64},    {{640, 257}, 64},     {{3, 45, 35}, 64},
      {{128, 640}, 64}, {{2, 64, 1280}, 64}, {{100000}, 1000},
  };
  return all;
}

TEST(DctEncode, ReferenceMatchesTheDefinitionInDouble) {
  std::uint64_t seed = 1;
  for (const Case& c : cases()) {
    const BlockLayout l = block_layout(c.shape, c.chunk);
    const std::vector<float> x = uniform_values(static_cast<std::size_t>(l.size()), seed++);
    // The double definition costs size · h·w; the largest cases are there for Cpu.
    if (l.size() * l.block_size() > lowcomm::test::unless_sanitized(std::int64_t{1} << 28, std::int64_t{1} << 24)) continue;
    std::vector<float> q(x.size());
    dct_encode_blocks(Backend::Reference, l, x, q);
    const std::vector<double> exact = encode_in_double(l, x);
    const std::vector<double> norms = block_norms(l, q);
    for (std::size_t e = 0; e < q.size(); ++e) {
      const auto block = static_cast<std::size_t>(e / static_cast<std::size_t>(l.block_size()));
      ASSERT_NEAR(q[e], exact[e], tolerance(l, norms[block]) / 2) << "element " << e;
    }
  }
}

TEST(DctEncode, CpuMatchesReferenceAtEveryThreadCount) {
  std::uint64_t seed = 100;
  for (int threads : {1, 2, 3}) {
    omp_set_num_threads(threads);
    for (const Case& c : cases()) {
      const BlockLayout l = block_layout(c.shape, c.chunk);
      const std::vector<float> x = uniform_values(static_cast<std::size_t>(l.size()), seed++);
      std::vector<float> expected(x.size());
      std::vector<float> actual(x.size(), std::numeric_limits<float>::quiet_NaN());
      dct_encode_blocks(Backend::Reference, l, x, expected);
      dct_encode_blocks(Backend::Cpu, l, x, actual);
      const std::vector<double> norms = block_norms(l, expected);
      for (std::size_t e = 0; e < x.size(); ++e) {
        const auto block = e / static_cast<std::size_t>(l.block_size());
        ASSERT_NEAR(actual[e], expected[e], cpu_tolerance(l, norms[block], expected[e]))
            << "threads " << threads << " element " << e << " chunk " << c.chunk;
      }
    }
  }
  omp_set_num_threads(omp_get_num_procs());
}

TEST(DctDecode, CpuMatchesReferenceAtEveryThreadCount) {
  std::uint64_t seed = 200;
  for (int threads : {1, 2, 3}) {
    omp_set_num_threads(threads);
    for (const Case& c : cases()) {
      const BlockLayout l = block_layout(c.shape, c.chunk);
      const std::vector<float> q = uniform_values(static_cast<std::size_t>(l.size()), seed++);
      std::vector<float> expected(q.size());
      std::vector<float> actual(q.size(), std::numeric_limits<float>::quiet_NaN());
      dct_decode_blocks(Backend::Reference, l, q, expected);
      dct_decode_blocks(Backend::Cpu, l, q, actual);
      const std::vector<double> norms = block_norms(l, q);
      for (std::int64_t b = 0; b < l.blocks(); ++b) {
        for (std::int64_t r = 0; r < l.block_rows; ++r) {
          for (std::int64_t col = 0; col < l.block_cols; ++col) {
            const std::size_t e = tensor_offset(l, b, r, col);
            ASSERT_NEAR(actual[e], expected[e], cpu_decode_tolerance(l, norms[b], expected[e]))
                << "threads " << threads << " block " << b;
          }
        }
      }
    }
  }
  omp_set_num_threads(omp_get_num_procs());
}

// X = C_hᵀ · Q · C_w per block, in double, straight from the definition (tensor layout).
std::vector<double> decode_in_double(const BlockLayout& l, const std::vector<float>& q) {
  const std::int64_t h = l.block_rows;
  const std::int64_t w = l.block_cols;
  const std::vector<float> ch = dct_basis(h);
  const std::vector<float> cw = dct_basis(w);
  std::vector<double> x(q.size());
  std::vector<double> u(static_cast<std::size_t>(h * w));
  for (std::int64_t b = 0; b < l.blocks(); ++b) {
    const float* qb = q.data() + b * h * w;
    for (std::int64_t i = 0; i < h; ++i) {
      for (std::int64_t c = 0; c < w; ++c) {
        double sum = 0.0;
        for (std::int64_t j = 0; j < w; ++j) sum += double{qb[i * w + j]} * cw[j * w + c];
        u[i * w + c] = sum;
      }
    }
    for (std::int64_t r = 0; r < h; ++r) {
      for (std::int64_t c = 0; c < w; ++c) {
        double sum = 0.0;
        for (std::int64_t i = 0; i < h; ++i) sum += double{ch[i * h + r]} * u[i * w + c];
        x[tensor_offset(l, b, r, c)] = sum;
      }
    }
  }
  return x;
}

// Cpu's result within bound(expected) of the double definition, element by element.
template <class Bound>
void expect_close_to(const std::vector<float>& actual, const std::vector<double>& exact, const Bound& bound,
                     const std::string& what) {
  for (std::size_t e = 0; e < actual.size(); ++e) {
    ASSERT_NEAR(actual[e], exact[e], bound(exact[e])) << what << " element " << e;
  }
}

// Every block height from 1 to 64 (Lee's fast transform for the even ones with an odd part of at
// most 15, the products for the rest: 1, primes, odd lengths) under lane counts that are not
// multiples of a vector or of FastDct's strip of 32 (block widths 7, 33 and 1 over 97 columns),
// each tensor large enough for the chunked path: the encode and the decode against the definition
// in double, the decode also on coefficients as sparse as DeMo's (4 of a block), and bitwise the
// same at 1 and 3 threads.
TEST(DctCpu, EveryBlockHeightMatchesTheDefinitionInDouble) {
  const double eps = std::numeric_limits<float>::epsilon();
  std::uint64_t seed = 900;
  for (std::int64_t h = 1; h <= 64; ++h) {
    for (std::int64_t width : {7, 33, 97}) {
      const std::int64_t block_cols = width == 97 ? 1 : width;
      const std::int64_t batch = (std::int64_t{1} << 17) / ((h + block_cols) * h * width) + 1;
      const BlockLayout l = block_layout(std::vector<std::int64_t>{batch, h, width}, 64);
      ASSERT_EQ(l.block_rows, h);
      ASSERT_EQ(l.block_cols, block_cols);
      const std::string what = "h " + std::to_string(h) + " width " + std::to_string(width);
      // The RMS of uniform(-1, 1) values; the bound is the decode's (cpu_decode_tolerance) with
      // the RMS in place of each block's: both stages' rounding, Lee's amplification included.
      const double rms = 1.0 / std::sqrt(3.0);
      const double unit = 12.0 * std::sqrt(static_cast<double>(h + block_cols + 2)) * eps;
      const auto bound = [&](double exact) { return unit * (rms + std::fabs(exact)); };
      const std::vector<float> x = uniform_values(static_cast<std::size_t>(l.size()), seed++);
      std::vector<float> q(x.size());
      omp_set_num_threads(1);
      dct_encode_blocks(Backend::Cpu, l, x, q);
      expect_close_to(q, encode_in_double(l, x), bound, "encode " + what);
      omp_set_num_threads(3);
      std::vector<float> q3(x.size());
      dct_encode_blocks(Backend::Cpu, l, x, q3);
      omp_set_num_threads(1);
      ASSERT_EQ(std::memcmp(q.data(), q3.data(), q.size() * sizeof(float)), 0) << "encode " << what;
      // Dense and sparse coefficients (the sparse ones take the decode's row sums).
      std::vector<float> sparse(q.size(), 0.0f);
      for (std::int64_t b = 0; b < l.blocks(); ++b) {
        for (std::int64_t j = 0; j < std::min<std::int64_t>(4, l.block_size()); ++j) {
          const std::int64_t e = b * l.block_size() + (j * 37 + b) % l.block_size();
          sparse[static_cast<std::size_t>(e)] = q[static_cast<std::size_t>(e)];
        }
      }
      for (const auto& [coefficients, kind] : {std::pair{&q, "dense"}, std::pair{&sparse, "sparse"}}) {
        std::vector<float> back(x.size());
        dct_decode_blocks(Backend::Cpu, l, *coefficients, back);
        expect_close_to(back, decode_in_double(l, *coefficients), bound,
                        std::string("decode ") + kind + " " + what);
        omp_set_num_threads(3);
        std::vector<float> back3(x.size());
        dct_decode_blocks(Backend::Cpu, l, *coefficients, back3);
        omp_set_num_threads(1);
        ASSERT_EQ(std::memcmp(back.data(), back3.data(), back.size() * sizeof(float)), 0)
            << "decode " << kind << " " << what;
      }
    }
  }
  omp_set_num_threads(omp_get_num_procs());
}

TEST(DctDecode, InvertsEncode) {
  std::uint64_t seed = 300;
  for (Backend backend : {Backend::Reference, Backend::Cpu}) {
    for (const Case& c : cases()) {
      const BlockLayout l = block_layout(c.shape, c.chunk);
      const std::vector<float> x = uniform_values(static_cast<std::size_t>(l.size()), seed++);
      std::vector<float> q(x.size());
      std::vector<float> back(x.size());
      dct_encode_blocks(backend, l, x, q);
      dct_decode_blocks(backend, l, q, back);
      for (std::size_t e = 0; e < x.size(); ++e) {
        ASSERT_NEAR(back[e], x[e], 1e-5) << to_string(backend) << " element " << e;
      }
    }
  }
}

TEST(DctCpu, BitwiseRepeatableAtEveryThreadCount) {
  std::uint64_t seed = 500;
  for (const Case& c : cases()) {
    const BlockLayout l = block_layout(c.shape, c.chunk);
    const std::vector<float> x = uniform_values(static_cast<std::size_t>(l.size()), seed++);
    std::vector<float> first_q, first_back;
    for (int threads : {1, 2, 3, 1}) {
      omp_set_num_threads(threads);
      std::vector<float> q(x.size());
      std::vector<float> back(x.size());
      dct_encode_blocks(Backend::Cpu, l, x, q);
      dct_decode_blocks(Backend::Cpu, l, x, back);
      if (first_q.empty()) {
        first_q = q;
        first_back = back;
        continue;
      }
      ASSERT_EQ(std::memcmp(q.data(), first_q.data(), q.size() * sizeof(float)), 0)
          << "encode, threads " << threads << " chunk " << c.chunk;
      ASSERT_EQ(std::memcmp(back.data(), first_back.data(), back.size() * sizeof(float)), 0)
          << "decode, threads " << threads << " chunk " << c.chunk;
    }
  }
  omp_set_num_threads(omp_get_num_procs());
}

TEST(DctEncode, CachedBasesAreSafeAcrossThreads) {
  // Several callers at once, each needing bases of lengths no one has asked for yet.
  const std::vector<Case> fresh = {{{71, 67}, 100}, {{83, 89}, 100}, {{97}, 100}, {{59, 61}, 100}};
  std::vector<std::vector<float>> results(fresh.size());
  std::vector<std::thread> callers;
  for (std::size_t t = 0; t < fresh.size(); ++t) {
    callers.emplace_back([&, t] {
      const BlockLayout l = block_layout(fresh[t].shape, fresh[t].chunk);
      const std::vector<float> x = uniform_values(static_cast<std::size_t>(l.size()), 400 + t);
      results[t].resize(x.size());
      dct_encode_blocks(Backend::Cpu, l, x, results[t]);
    });
  }
  for (std::thread& caller : callers) caller.join();
  for (std::size_t t = 0; t < fresh.size(); ++t) {
    const BlockLayout l = block_layout(fresh[t].shape, fresh[t].chunk);
    const std::vector<float> x = uniform_values(static_cast<std::size_t>(l.size()), 400 + t);
    std::vector<float> expected(x.size());
    dct_encode_blocks(Backend::Reference, l, x, expected);
    const std::vector<double> norms = block_norms(l, expected);
    for (std::size_t e = 0; e < x.size(); ++e) {
      const auto block = e / static_cast<std::size_t>(l.block_size());
      ASSERT_NEAR(results[t][e], expected[e], cpu_tolerance(l, norms[block], expected[e])) << t;
    }
  }
}

TEST(DctErrors, NameTheKernelAndTheProblem) {
  const BlockLayout l{1, 4, 6, 2, 3};
  std::vector<float> x(24, 1.0f);
  std::vector<float> q(24);
  std::vector<float> short_span(23);
  for (Backend backend : {Backend::Reference, Backend::Cpu}) {
    expect_error([&] { dct_encode_blocks(backend, l, short_span, q); }, "dct_encode_blocks",
                 "24 elements");
    expect_error([&] { dct_encode_blocks(backend, l, x, short_span); }, "dct_encode_blocks",
                 "23");
    expect_error([&] { dct_decode_blocks(backend, l, short_span, x); }, "dct_decode_blocks",
                 "24 elements");
    expect_error([&] { dct_decode_blocks(backend, l, q, short_span); }, "dct_decode_blocks",
                 "23");
    expect_error([&] { dct_encode_blocks(backend, BlockLayout{1, 4, 6, 3, 3}, x, q); },
                 "dct_encode_blocks", "does not divide");
    expect_error([&] { dct_decode_blocks(backend, BlockLayout{1, 4, 6, 0, 3}, q, x); },
                 "dct_decode_blocks", "< 1");
    std::vector<float> both(36);
    expect_error(
        [&] {
          dct_encode_blocks(backend, l, std::span<const float>(both).first(24),
                            std::span(both).last(24));
        },
        "dct_encode_blocks", "overlap");
    expect_error([&] { dct_decode_blocks(backend, l, x, x); }, "dct_decode_blocks", "overlap");
  }
  expect_refused_on_cuda([&] { dct_encode_blocks(Backend::Cuda, l, x, q); }, "dct_encode_blocks");
  expect_refused_on_cuda([&] { dct_decode_blocks(Backend::Cuda, l, q, x); }, "dct_decode_blocks");
}

}  // namespace
}  // namespace lowcomm::kernels
