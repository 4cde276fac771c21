// Gram-Schmidt: Reference against the same algorithm in double, Cpu against Reference within the
// tolerance linalg.hpp states, orthonormality, the zero column, determinism and the errors.
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "lowcomm/error.hpp"
#include "lowcomm/kernels/linalg.hpp"

#include "kernel_test_support.hpp"

namespace lowcomm::kernels {

using test::expect_refused_on_cuda;

namespace {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

std::vector<float> gaussian(std::int64_t count, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  std::vector<float> m(static_cast<std::size_t>(count));
  for (auto& v : m) v = normal(rng);
  return m;
}

// The paper's loop in double: what both backends approximate.
std::vector<double> orthonormalize_double(const std::vector<float>& matrix, std::int64_t rows,
                                          std::int64_t cols, double epsilon) {
  std::vector<double> p(matrix.begin(), matrix.end());
  auto at = [&](std::int64_t r, std::int64_t c) -> double& { return p[r * cols + c]; };
  for (std::int64_t i = 0; i < cols; ++i) {
    double squares = 0;
    for (std::int64_t r = 0; r < rows; ++r) squares += at(r, i) * at(r, i);
    const double divisor = std::sqrt(squares) + epsilon;
    for (std::int64_t r = 0; r < rows; ++r) at(r, i) /= divisor;
    for (std::int64_t j = i + 1; j < cols; ++j) {
      double dot = 0;
      for (std::int64_t r = 0; r < rows; ++r) dot += at(r, i) * at(r, j);
      for (std::int64_t r = 0; r < rows; ++r) at(r, j) -= dot * at(r, i);
    }
  }
  return p;
}

// max over columns of ‖a_c − b_c‖₂.
template <typename A, typename B>
double max_column_distance(const A& a, const B& b, std::int64_t rows, std::int64_t cols) {
  double worst = 0;
  for (std::int64_t c = 0; c < cols; ++c) {
    double squares = 0;
    for (std::int64_t r = 0; r < rows; ++r) {
      const double d = double{a[r * cols + c]} - double{b[r * cols + c]};
      squares += d * d;
    }
    worst = std::max(worst, std::sqrt(squares));
  }
  return worst;
}

TEST(OrthonormalizeColumns, NormalisesAndProjectsByHand) {
  // Columns (3, 4) and (1, 0): p0 = (0.6, 0.8); p1 = (1, 0) − 0.6 · (0.6, 0.8) = (0.64, −0.48),
  // then normalised to (0.8, −0.6).
  for (Backend backend : {Backend::Reference, Backend::Cpu}) {
    std::vector<float> m = {3.0f, 1.0f, 4.0f, 0.0f};
    orthonormalize_columns(backend, m, 2, 2);
    EXPECT_NEAR(m[0], 0.6f, 1e-6f);
    EXPECT_NEAR(m[2], 0.8f, 1e-6f);
    EXPECT_NEAR(m[1], 0.8f, 1e-6f);
    EXPECT_NEAR(m[3], -0.6f, 1e-6f);
  }
}

TEST(OrthonormalizeColumns, CpuMatchesReferenceAndBothMatchDouble) {
  const std::int64_t shapes[][2] = {{0, 0}, {0, 3},   {5, 0},   {1, 1},    {7, 3},
                                    {257, 4}, {300, 17}, {1031, 5}, {50304, 4}};
  for (const auto& shape : shapes) {
    const std::int64_t rows = shape[0];
    const std::int64_t cols = shape[1];
    const auto input = gaussian(rows * cols, 31 + static_cast<unsigned>(rows));
    auto reference = input;
    auto cpu = input;
    orthonormalize_columns(Backend::Reference, reference, rows, cols);
    orthonormalize_columns(Backend::Cpu, cpu, rows, cols);
    const auto exact = orthonormalize_double(input, rows, cols, 1e-8);
    // Unit columns, float sums over `rows` terms: expected error about sqrt(rows) · 2^−24 per
    // column, growing with the columns already projected out; 1e-6 · sqrt(rows) · cols leaves
    // a wide margin for these well-conditioned inputs and still catches a wrong formula.
    const double tolerance = 1e-6 * std::sqrt(double(std::max<std::int64_t>(rows, 1))) *
                             double(std::max<std::int64_t>(cols, 1));
    EXPECT_LE(max_column_distance(cpu, reference, rows, cols), tolerance) << rows << "×" << cols;
    EXPECT_LE(max_column_distance(reference, exact, rows, cols), tolerance) << rows << "×" << cols;

    if (rows < cols) continue;
    for (std::int64_t i = 0; i < cols; ++i) {
      for (std::int64_t j = 0; j < cols; ++j) {
        double dot = 0;
        for (std::int64_t r = 0; r < rows; ++r) {
          dot += double{cpu[r * cols + i]} * cpu[r * cols + j];
        }
        EXPECT_NEAR(dot, i == j ? 1.0 : 0.0, 1e-5) << rows << "×" << cols << " " << i << "," << j;
      }
    }
  }
}

TEST(OrthonormalizeColumns, CpuIsDeterministic) {
  const auto input = gaussian(50304 * 4, 2);
  auto first = input;
  auto second = input;
  orthonormalize_columns(Backend::Cpu, first, 50304, 4);
  orthonormalize_columns(Backend::Cpu, second, 50304, 4);
  EXPECT_EQ(first, second);
}

TEST(OrthonormalizeColumns, ZeroColumnStaysZeroAndLaterColumnsStillOrthonormal) {
  for (Backend backend : {Backend::Reference, Backend::Cpu}) {
    auto m = gaussian(600 * 3, 8);
    for (std::int64_t r = 0; r < 600; ++r) m[r * 3 + 1] = 0.0f;
    orthonormalize_columns(backend, m, 600, 3);
    double norm2 = 0;
    double dot02 = 0;
    for (std::int64_t r = 0; r < 600; ++r) {
      ASSERT_EQ(m[r * 3 + 1], 0.0f) << r;
      norm2 += double{m[r * 3 + 2]} * m[r * 3 + 2];
      dot02 += double{m[r * 3]} * m[r * 3 + 2];
    }
    EXPECT_NEAR(norm2, 1.0, 1e-5);
    EXPECT_NEAR(dot02, 0.0, 1e-5);
  }
}

TEST(OrthonormalizeColumns, RejectsBadArguments) {
  std::vector<float> m(6);
  for (Backend backend : {Backend::Reference, Backend::Cpu}) {
    EXPECT_THAT([&] { orthonormalize_columns(backend, m, -2, -3); },
                ThrowsMessage<Error>(HasSubstr("dimensions must be ≥ 0")));
    EXPECT_THAT([&] { orthonormalize_columns(backend, m, 2, 2); },
                ThrowsMessage<Error>(HasSubstr("matrix holds 6 floats, 2 × 2 needs 4")));
    EXPECT_THAT(
        [&] {
          orthonormalize_columns(backend, m, std::int64_t{1} << 40, std::int64_t{1} << 40);
        },
        ThrowsMessage<Error>(HasSubstr("overflows")));
    for (float epsilon : {0.0f, -1e-8f, std::numeric_limits<float>::quiet_NaN(),
                          std::numeric_limits<float>::infinity()}) {
      EXPECT_THAT([&] { orthonormalize_columns(backend, m, 3, 2, epsilon); },
                  ThrowsMessage<Error>(HasSubstr("epsilon must be finite and > 0")));
    }
  }
  expect_refused_on_cuda([&] { orthonormalize_columns(Backend::Cuda, m, 3, 2); }, "orthonormalize_columns");
}

}  // namespace
}  // namespace lowcomm::kernels
