// GEMM: a product by hand, Cpu against Reference for every transposition on awkward shapes within
// the tolerance linalg.hpp states, the BLAS conventions for beta = 0 and k = 0, and the errors.
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <omp.h>
#include <gtest/gtest.h>

#include "lowcomm/error.hpp"
#include "lowcomm/kernels/linalg.hpp"

#include "kernel_test_support.hpp"

namespace lowcomm::kernels {

using test::expect_refused_on_cuda;

namespace {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

constexpr Backend kBackends[] = {Backend::Reference, Backend::Cpu};

std::vector<float> uniform(std::int64_t count, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> pick(-1.0f, 1.0f);
  std::vector<float> v(static_cast<std::size_t>(count));
  for (auto& x : v) x = pick(rng);
  return v;
}

TEST(Gemm, MultipliesByHand) {
  // A = [1 2 3; 4 5 6], B = [1 0; 0 1; 1 1]: A·B = [4 5; 10 11]; C ← 2·A·B + 1·C.
  const std::vector<float> a = {1, 2, 3, 4, 5, 6};
  const std::vector<float> b = {1, 0, 0, 1, 1, 1};
  const std::vector<float> a_t = {1, 4, 2, 5, 3, 6};
  const std::vector<float> b_t = {1, 0, 1, 0, 1, 1};
  const std::vector<float> want = {9, 11, 21, 23};
  for (Backend backend : kBackends) {
    for (int t = 0; t < 4; ++t) {
      const bool ta = (t & 1) != 0;
      const bool tb = (t & 2) != 0;
      std::vector<float> c = {1, 1, 1, 1};
      gemm(backend, ta, tb, 2, 2, 3, 2.0f, ta ? a_t : a, tb ? b_t : b, 1.0f, c);
      EXPECT_EQ(c, want) << to_string(backend) << " transposes " << ta << tb;
    }
  }
}

TEST(Gemm, CpuMatchesReferenceWithinTheStatedTolerance) {
  const std::int64_t shapes[][3] = {{0, 0, 0},  {1, 1, 1},    {0, 3, 5},     {3, 0, 5},
                                    {3, 5, 0},  {7, 13, 17},  {64, 1, 300},  {131, 67, 257},
                                    {1, 257, 513}, {200, 4, 768},
                                    // thin operands (Cpu's own loops): k not a multiple of 16, n or k at the
                                    // limit of 8 and just past it
                                    {300, 2, 771}, {257, 301, 2}, {1000, 8, 33}, {5, 9, 3}, {97, 3, 17},
                                    {33, 9, 9}};
  const float coefficients[][2] = {{1.0f, 0.0f}, {0.5f, -2.0f}, {-1.0f, 1.0f}};
  unsigned seed = 1;
  for (const auto& shape : shapes) {
    const std::int64_t m = shape[0];
    const std::int64_t n = shape[1];
    const std::int64_t k = shape[2];
    const auto a = uniform(m * k, ++seed);
    const auto b = uniform(k * n, ++seed);
    const auto c0 = uniform(m * n, ++seed);
    for (int t = 0; t < 4; ++t) {
      const bool ta = (t & 1) != 0;
      const bool tb = (t & 2) != 0;
      // The same numbers are read as op(A) whether or not they are stored transposed.
      auto op_a = [&](std::int64_t i, std::int64_t p) { return ta ? a[p * m + i] : a[i * k + p]; };
      auto op_b = [&](std::int64_t p, std::int64_t j) { return tb ? b[j * k + p] : b[p * n + j]; };
      for (const auto& [alpha, beta] : coefficients) {
        auto reference = c0;
        auto cpu = c0;
        gemm(Backend::Reference, ta, tb, m, n, k, alpha, a, b, beta, reference);
        gemm(Backend::Cpu, ta, tb, m, n, k, alpha, a, b, beta, cpu);
        const std::string where = std::to_string(m) + "×" + std::to_string(n) + "×" +
                                  std::to_string(k) + " t" + std::to_string(t) +
                                  " alpha " + std::to_string(alpha);
        for (std::int64_t i = 0; i < m; ++i) {
          for (std::int64_t j = 0; j < n; ++j) {
            double magnitude = 0;
            double exact = 0;
            for (std::int64_t p = 0; p < k; ++p) {
              magnitude += std::fabs(double{op_a(i, p)} * op_b(p, j));
              exact += double{op_a(i, p)} * op_b(p, j);
            }
            const double c = c0[i * n + j];
            magnitude = std::fabs(alpha) * magnitude + std::fabs(beta * c);
            exact = alpha * exact + beta * c;
            const double tolerance = 1e-5 * std::sqrt(double(k)) * magnitude + 1e-30;
            ASSERT_NEAR(cpu[i * n + j], reference[i * n + j], tolerance) << where;
            ASSERT_NEAR(reference[i * n + j], exact, tolerance) << where;
          }
        }
      }
    }
  }
}

TEST(Gemm, BetaZeroOverwritesWithoutReadingAndEmptyInnerDimensionScales) {
  const std::vector<float> a = {1, 2};
  const std::vector<float> b = {3, 4};
  const std::vector<float> none;
  for (Backend backend : kBackends) {
    std::vector<float> c = {std::numeric_limits<float>::quiet_NaN()};
    gemm(backend, false, false, 1, 1, 2, 1.0f, a, b, 0.0f, c);
    EXPECT_EQ(c[0], 11.0f) << to_string(backend);

    std::vector<float> scaled = {1.0f, -2.0f, 3.0f};
    gemm(backend, false, true, 3, 1, 0, 5.0f, none, none, 2.0f, scaled);
    EXPECT_EQ(scaled, (std::vector<float>{2.0f, -4.0f, 6.0f})) << to_string(backend);
    gemm(backend, true, false, 3, 1, 0, 5.0f, none, none, 0.0f, scaled);
    EXPECT_EQ(scaled, (std::vector<float>{0.0f, 0.0f, 0.0f})) << to_string(backend);
  }
}

// The codecs' products give the same bits on 1, 2 and 3 threads: PowerSGD's thin shapes in Cpu's
// own loops, and the DCT's (k <= 64) as the DCT runs them, inside its parallel region, where the
// BLAS computes each product on the calling thread alone. (Outside a parallel region the BLAS
// splits a product across threads, and that can change its bits even at k = 32: OpenBLAS 0.3.21's
// Haswell kernels on an AMD EPYC do.)
TEST(Gemm, CodecProductsAreBitwiseIdenticalAtEveryThreadCount) {
  struct Shape { bool ta, tb; std::int64_t m, n, k; bool thin; };
  const Shape shapes[] = {{false, false, 3072, 2, 768, true}, {true, false, 768, 2, 3072, true},
                          {false, true, 768, 768, 2, true},   {false, false, 32, 2048, 32, false},
                          {true, false, 32, 4096, 32, false}, {false, true, 4096, 32, 32, false},
                          {false, false, 257, 129, 64, false}};
  for (const Shape& s : shapes) {
    const std::vector<float> a = uniform(s.m * s.k, 11), b = uniform(s.k * s.n, 12);
    std::vector<float> first;
    for (int threads : {1, 2, 3}) {
      omp_set_num_threads(threads);
      std::vector<float> c(static_cast<std::size_t>(s.m * s.n));
      const auto product = [&] { gemm(Backend::Cpu, s.ta, s.tb, s.m, s.n, s.k, 1.0f, a, b, 0.0f, c); };
      if (s.thin) {
        product();
      } else {
#pragma omp parallel
#pragma omp single
        product();
      }
      if (first.empty()) first = c;
      EXPECT_EQ(c, first) << s.m << "x" << s.n << "x" << s.k << " on " << threads << " threads";
    }
  }
  omp_set_num_threads(omp_get_num_procs());
}

// Larger k goes to the BLAS, which may cut k differently when it threads (OpenBLAS does for k
// above its block and not a multiple of it: 500 and 1000 here): the same bits at the same thread
// count, run after run, is what is promised there.
TEST(Gemm, BlasProductsRepeatBitwiseAtTheSameThreadCount) {
  struct Shape { bool ta, tb; std::int64_t m, n, k; };
  const Shape shapes[] = {{false, false, 257, 129, 1000}, {false, true, 256, 768, 768}, {true, false, 768, 64, 500},
                          {false, true, 64, 768, 3072}};
  for (const Shape& s : shapes) {
    const std::vector<float> a = uniform(s.m * s.k, 13), b = uniform(s.k * s.n, 14);
    for (int threads : {1, 2, 3}) {
      omp_set_num_threads(threads);
      std::vector<float> c1(static_cast<std::size_t>(s.m * s.n)), c2(c1.size());
      gemm(Backend::Cpu, s.ta, s.tb, s.m, s.n, s.k, 1.0f, a, b, 0.0f, c1);
      gemm(Backend::Cpu, s.ta, s.tb, s.m, s.n, s.k, 1.0f, a, b, 0.0f, c2);
      EXPECT_EQ(c1, c2) << s.m << "x" << s.n << "x" << s.k << " on " << threads << " threads";
    }
  }
  omp_set_num_threads(omp_get_num_procs());
}

// Cpu's loops for Aᵀ·B with few columns and for A·Bᵀ with a small k sum in index order, as the
// Reference does: bitwise equal.
TEST(Gemm, ThinProductsSummedInIndexOrderAreTheReferenceBitwise) {
  struct Shape { bool ta, tb; std::int64_t m, n, k; };
  const Shape shapes[] = {{true, false, 771, 2, 301}, {true, false, 5, 8, 1000}, {false, true, 301, 257, 2},
                          {false, true, 1000, 7, 8}};
  for (const Shape& s : shapes) {
    const std::vector<float> a = uniform(s.m * s.k, 21), b = uniform(s.k * s.n, 22), c0 = uniform(s.m * s.n, 23);
    for (const float beta : {0.0f, -0.5f}) {
      std::vector<float> reference = c0, cpu = c0;
      gemm(Backend::Reference, s.ta, s.tb, s.m, s.n, s.k, 0.75f, a, b, beta, reference);
      gemm(Backend::Cpu, s.ta, s.tb, s.m, s.n, s.k, 0.75f, a, b, beta, cpu);
      EXPECT_EQ(cpu, reference) << s.m << "x" << s.n << "x" << s.k << " beta " << beta;
    }
  }
}

TEST(Gemm, RejectsBadArguments) {
  const std::vector<float> a(6);
  const std::vector<float> b(12);
  std::vector<float> c(8);
  for (Backend backend : kBackends) {
    EXPECT_NO_THROW(gemm(backend, false, false, 2, 4, 3, 1, a, b, 0, c));
    EXPECT_NO_THROW(gemm(backend, true, true, 2, 4, 3, 1, a, b, 0, c));
    EXPECT_THAT([&] { gemm(backend, false, false, -2, 4, 3, 1, a, b, 0, c); },
                ThrowsMessage<Error>(HasSubstr("dimensions must be ≥ 0")));
    EXPECT_THAT([&] { gemm(backend, false, false, 2, 4, 4, 1, a, b, 0, c); },
                ThrowsMessage<Error>(HasSubstr("A (m × k) holds 6 floats, 2 × 4 needs 8")));
    EXPECT_THAT([&] { gemm(backend, true, false, 3, 4, 3, 1, a, b, 0, c); },
                ThrowsMessage<Error>(HasSubstr("A (stored k × m) holds 6 floats, 3 × 3")));
    EXPECT_THAT([&] { gemm(backend, false, true, 2, 5, 3, 1, a, b, 0, c); },
                ThrowsMessage<Error>(HasSubstr("B (stored n × k) holds 12 floats, 5 × 3")));
    EXPECT_THAT([&] { gemm(backend, false, false, 2, 3, 3, 1, a, b, 0, c); },
                ThrowsMessage<Error>(HasSubstr("B (k × n) holds 12 floats, 3 × 3")));
    std::vector<float> short_c(7);
    EXPECT_THAT([&] { gemm(backend, false, false, 2, 4, 3, 1, a, b, 0, short_c); },
                ThrowsMessage<Error>(HasSubstr("C (m × n) holds 7 floats")));
    const std::int64_t huge = std::int64_t{1} << 40;
    EXPECT_THAT([&] { gemm(backend, false, false, huge, huge, huge, 1, a, b, 0, c); },
                ThrowsMessage<Error>(HasSubstr("overflows")));
  }
  expect_refused_on_cuda([&] { gemm(Backend::Cuda, false, false, 2, 4, 3, 1, a, b, 0, c); }, "gemm");
}

}  // namespace
}  // namespace lowcomm::kernels
