// PowerSGD's fused error-feedback product (linalg.hpp: feedback_product) against the unfused
// sequence it stands for, on each backend that has it: the same bits, on awkward sizes, at every
// thread count; and its argument checks.
#include <omp.h>

#include <cstdint>
#include <limits>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kernel_test_support.hpp"
#include "lowcomm/error.hpp"
#include "lowcomm/kernels/elementwise.hpp"
#include "lowcomm/kernels/linalg.hpp"

namespace lowcomm::kernels {
namespace {

using test::expect_bitwise_equal;
using test::uniform_values;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

struct Case {
  std::int64_t rows, cols, last_rank, rank;
  float decay;
};

struct Result {
  std::vector<float> corrected, p;
};

struct Inputs {
  std::vector<float> last_p, last_q, gradient, corrected, q;
  explicit Inputs(const Case& c)
      : last_p(uniform_values(static_cast<std::size_t>(c.rows * c.last_rank), 1)),
        last_q(uniform_values(static_cast<std::size_t>(c.cols * c.last_rank), 2)),
        gradient(uniform_values(static_cast<std::size_t>(c.rows * c.cols), 3)),
        corrected(uniform_values(static_cast<std::size_t>(c.rows * c.cols), 4)),
        q(uniform_values(static_cast<std::size_t>(c.cols * c.rank), 5)) {
    if (!gradient.empty()) {  // signed zeros and an infinity travel through as in the sequence
      gradient[0] = -0.0f;
      corrected[0] = 0.0f;
      gradient.back() = std::numeric_limits<float>::infinity();
    }
  }
};

Result fused(Backend backend, const Case& c, const Inputs& in) {
  Result r{in.corrected, std::vector<float>(static_cast<std::size_t>(c.rows * c.rank), -7.0f)};
  feedback_product(backend, c.rows, c.cols, c.last_rank, in.last_p, in.last_q, c.decay, in.gradient, r.corrected,
                   c.rank, in.q, r.p);
  return r;
}

// linalg.hpp's sequence, on the same backend.
Result unfused(Backend backend, const Case& c, const Inputs& in) {
  Result r{in.corrected, std::vector<float>(static_cast<std::size_t>(c.rows * c.rank))};
  std::vector<float> residual(in.corrected.size(), std::numeric_limits<float>::quiet_NaN());
  gemm(backend, false, true, c.rows, c.cols, c.last_rank, 1.0f, in.last_p, in.last_q, 0.0f, residual);
  subtract(backend, r.corrected, residual, residual);
  scale_add(backend, c.decay, residual, in.gradient, r.corrected);
  gemm(backend, false, false, c.rows, c.rank, c.cols, 1.0f, r.corrected, in.q, 0.0f, r.p);
  return r;
}

// Rows and columns of 1, primes, and widths below, at and past Cpu's 16 partial sums and the
// vector widths; ranks 1 to 8, the last step's rank differing from this one's; plain error
// feedback (decay 1) and DeMo-style decay.
const Case kCases[] = {{1, 1, 1, 1, 1.0f},    {1, 17, 2, 1, 0.9f},  {7, 1, 1, 3, 1.0f},    {13, 16, 2, 2, 0.9f},
                       {65, 31, 3, 2, 1.0f},  {130, 33, 8, 8, 0.5f}, {257, 100, 2, 4, 0.999f}, {3, 769, 1, 2, 1.0f},
                       {0, 5, 2, 2, 1.0f},    {5, 0, 2, 2, 1.0f}};

TEST(FeedbackProduct, IsTheUnfusedSequenceBitwiseOnEachBackend) {
  for (const Backend backend : {Backend::Reference, Backend::Cpu}) {
    for (const Case& c : kCases) {
      SCOPED_TRACE(::testing::Message() << to_string(backend) << " " << c.rows << " × " << c.cols << " last rank "
                                        << c.last_rank << " rank " << c.rank << " decay " << c.decay);
      const Inputs in(c);
      const Result want = unfused(backend, c, in);
      const Result got = fused(backend, c, in);
      expect_bitwise_equal(got.corrected, want.corrected);
      expect_bitwise_equal(got.p, want.p);
    }
  }
}

TEST(FeedbackProduct, CpuGivesTheSameBitsAtEveryThreadCount) {
  const Case c{301, 203, 2, 3, 0.9f};
  const Inputs in(c);
  omp_set_num_threads(1);
  const Result one = fused(Backend::Cpu, c, in);
  for (const int threads : {2, 3}) {
    omp_set_num_threads(threads);
    const Result many = fused(Backend::Cpu, c, in);
    expect_bitwise_equal(many.corrected, one.corrected);
    expect_bitwise_equal(many.p, one.p);
  }
  omp_set_num_threads(omp_get_num_procs());
}

// Cpu's product sums in 16 partial sums, Reference's in index order: within float rounding.
TEST(FeedbackProduct, CpuMatchesReferenceWithinRounding) {
  const Case c{67, 515, 2, 2, 0.9f};
  Inputs in(c);
  in.gradient.back() = 0.5f;  // finite: an infinite product has no rounding to compare
  const Result reference = fused(Backend::Reference, c, in);
  const Result cpu = fused(Backend::Cpu, c, in);
  expect_bitwise_equal(cpu.corrected, reference.corrected);  // elementwise: the same operations
  for (std::size_t i = 0; i < cpu.p.size(); ++i) EXPECT_NEAR(cpu.p[i], reference.p[i], 1e-4f) << "p " << i;
}

TEST(FeedbackProduct, RejectsBadArguments) {
  const Case c{4, 6, 2, 2, 1.0f};
  Inputs in(c);
  std::vector<float> p(8);
  auto call = [&](std::int64_t last_rank, std::int64_t rank, std::span<float> corrected, std::span<float> out) {
    feedback_product(Backend::Cpu, 4, 6, last_rank, in.last_p, in.last_q, 1.0f, in.gradient, corrected, rank, in.q,
                     out);
  };
  EXPECT_NO_THROW(call(2, 2, in.corrected, p));
  EXPECT_THAT([&] { call(0, 2, in.corrected, p); }, ThrowsMessage<Error>(HasSubstr("ranks must be 1 to 8, got 0")));
  EXPECT_THAT([&] { call(2, 9, in.corrected, p); }, ThrowsMessage<Error>(HasSubstr("ranks must be 1 to 8, got 9")));
  EXPECT_THAT([&] { call(3, 2, in.corrected, p); },
              ThrowsMessage<Error>(HasSubstr("last_p holds 8 floats, 4 × 3 needs 12")));
  std::vector<float> short_p(7);
  EXPECT_THAT([&] { call(2, 2, in.corrected, short_p); }, ThrowsMessage<Error>(HasSubstr("p holds 7 floats")));
  EXPECT_THAT([&] { call(2, 2, std::span<float>(in.corrected).first(23), p); },
              ThrowsMessage<Error>(HasSubstr("corrected holds 23 floats")));
  // The product written over the matrix it reads.
  EXPECT_THAT([&] { call(2, 2, in.corrected, std::span<float>(in.corrected).first(8)); },
              ThrowsMessage<Error>(HasSubstr("corrected and p share memory")));
  EXPECT_THAT([&] { call(2, 2, std::span<float>(in.gradient), p); },
              ThrowsMessage<Error>(HasSubstr("an output shares memory with an input")));
  EXPECT_THAT([&] { feedback_product(Backend::Cpu, -1, 6, 2, in.last_p, in.last_q, 1.0f, in.gradient,
                                     in.corrected, 2, in.q, p); },
              ThrowsMessage<Error>(HasSubstr("dimensions must be ≥ 0")));
}

}  // namespace
}  // namespace lowcomm::kernels
