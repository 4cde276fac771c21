// The optimizers' update kernels (kernels/optimizer_updates.hpp): the Cpu loops (vectorised,
// threaded in pieces) give the Reference's bits on random tensors of awkward sizes, with both
// zeros, NaN and infinite gradients; mismatched sizes throw, modifying nothing. What the rules
// compute is checked against torch.optim in tests/optim/fixture_test.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

#include "kernel_test_support.hpp"
#include "lowcomm/kernels/optimizer_updates.hpp"

namespace lowcomm::kernels::test {
namespace {

// 1, a prime, a size with a ragged last piece, and one spread over several threads' pieces.
constexpr std::size_t kSizes[] = {1, 17, 1000, 100003};

std::vector<float> gradient(std::size_t n, std::uint64_t seed) {
  std::vector<float> g = uniform_values(n, seed);
  if (n > 10) {
    g[2] = 0.0f;
    g[3] = -0.0f;
    g[5] = std::numeric_limits<float>::quiet_NaN();
    g[9] = std::numeric_limits<float>::infinity();
  }
  return g;
}

// Positive second moments, as AdamW's state always holds.
std::vector<float> squares(std::size_t n, std::uint64_t seed) {
  std::vector<float> v = uniform_values(n, seed);
  for (float& x : v) x *= x;
  return v;
}

const AdamWScalars kAdamW{.decay = 0.9999f, .beta1 = 0.9f, .beta2 = 0.95f, .one_minus_beta1 = 0.1f,
                          .one_minus_beta2 = 0.05f, .bc2_sqrt = 0.3f, .eps = 1e-8f, .neg_step_size = -0.004f};

TEST(OptimizerUpdates, AdamWOnCpuIsTheReferenceBitForBit) {
  for (const std::size_t n : kSizes) {
    const std::vector<float> g = gradient(n, n);
    std::vector<float> p = uniform_values(n, n + 1), m = uniform_values(n, n + 2), v = squares(n, n + 3);
    std::vector<float> cp = p, cm = m, cv = v;
    adamw_update(Backend::Reference, kAdamW, p, g, m, v);
    adamw_update(Backend::Cpu, kAdamW, cp, g, cm, cv);
    expect_bitwise_equal(cp, p);
    expect_bitwise_equal(cm, m);
    expect_bitwise_equal(cv, v);
  }
}

TEST(OptimizerUpdates, SgdOnCpuIsTheReferenceBitForBitInEveryVariant) {
  for (const bool momentum : {false, true}) {
    for (const bool first : {false, true}) {
      for (const bool nesterov : {false, true}) {
        for (const bool decays : {false, true}) {
          if (nesterov && !momentum) continue;
          const SgdScalars s{.wd = 0.01f, .mu = 0.9f, .keep = 0.75f, .neg_lr = -0.1f,
                             .decays = decays, .momentum = momentum, .first = first, .nesterov = nesterov};
          for (const std::size_t n : kSizes) {
            const std::vector<float> g = gradient(n, n);
            std::vector<float> p = uniform_values(n, n + 1), b = momentum ? uniform_values(n, n + 2) : std::vector<float>();
            std::vector<float> cp = p, cb = b;
            sgd_update(Backend::Reference, s, p, g, b);
            sgd_update(Backend::Cpu, s, cp, g, cb);
            expect_bitwise_equal(cp, p);
            expect_bitwise_equal(cb, b);
          }
        }
      }
    }
  }
}

TEST(OptimizerUpdates, SignumOnCpuIsTheReferenceBitForBit) {
  for (const bool decays : {false, true}) {
    const SignumScalars s{.beta = 0.9f, .one_minus_beta = 0.1f, .decay = 0.999f, .neg_lr = -0.01f, .decays = decays};
    for (const std::size_t n : kSizes) {
      const std::vector<float> g = gradient(n, n);
      std::vector<float> p = uniform_values(n, n + 1), m = uniform_values(n, n + 2);
      if (n > 10) m[2] = m[3] = 0.0f;  // with g = ±0 the momentum stays zero: sign 0, no step
      std::vector<float> cp = p, cm = m;
      signum_update(Backend::Reference, s, p, g, m);
      signum_update(Backend::Cpu, s, cp, g, cm);
      expect_bitwise_equal(cp, p);
      expect_bitwise_equal(cm, m);
      if (n > 10 && !decays) {
        EXPECT_EQ(p[2], uniform_values(n, n + 1)[2]) << "sign(0) = 0 leaves the parameter";
        EXPECT_TRUE(std::isnan(p[5])) << "a NaN gradient shows in the parameter";
      }
    }
  }
}

TEST(OptimizerUpdates, MismatchedSizesThrowAndModifyNothing) {
  std::vector<float> p(4, 1.0f), g(4, 1.0f), m(4, 0.0f), v(3, 0.0f);
  for (const Backend backend : {Backend::Reference, Backend::Cpu}) {
    expect_error([&] { adamw_update(backend, kAdamW, p, g, m, v); }, "adamw_update: exp_avg_sq holds 3 values",
                 "expected 4 (the parameter tensor's size)");
    expect_error([&] { adamw_update(backend, kAdamW, p, std::span<const float>(g).first(2), m, m); },
                 "adamw_update: the gradient holds 2");
    const SgdScalars plain{.wd = 0, .mu = 0, .keep = 1, .neg_lr = -1, .decays = false, .momentum = false,
                           .first = true, .nesterov = false};
    expect_error([&] { sgd_update(backend, plain, p, g, m); }, "sgd_update: the momentum buffer holds 4 values",
                 "expected 0 (no momentum)");
    const SignumScalars signum{.beta = 0, .one_minus_beta = 1, .decay = 1, .neg_lr = -1, .decays = false};
    expect_error([&] { signum_update(backend, signum, p, g, v); }, "signum_update: the momentum holds 3");
  }
  EXPECT_EQ(p, std::vector<float>(4, 1.0f));
  EXPECT_EQ(m, std::vector<float>(4, 0.0f));
}

}  // namespace
}  // namespace lowcomm::kernels::test
