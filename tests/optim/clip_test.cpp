// clip_by_global_norm: torch.nn.utils.clip_grad_norm_'s formula, and the non-finite case.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <span>
#include <vector>

#include "lowcomm/error.hpp"
#include "lowcomm/optim/clip.hpp"

namespace lowcomm {
namespace {

TEST(Clip, ScalesAboveTheLimit) {
  std::vector<float> a{3.0f}, b{0.0f, 4.0f};
  const std::vector<std::span<float>> grads{a, b};
  EXPECT_DOUBLE_EQ(clip_by_global_norm(grads, 1.0), 5.0);
  const float c = static_cast<float>(1.0 / (5.0 + 1e-6));
  EXPECT_EQ(a[0], 3.0f * c);
  EXPECT_EQ(b[0], 0.0f);
  EXPECT_EQ(b[1], 4.0f * c);
}

TEST(Clip, LeavesGradientsAtOrBelowTheLimit) {
  std::vector<float> a{3.0f, 4.0f};
  const std::vector<std::span<float>> grads{a};
  EXPECT_DOUBLE_EQ(clip_by_global_norm(grads, 5.0), 5.0);
  EXPECT_DOUBLE_EQ(clip_by_global_norm(grads, 7.0), 5.0);
  EXPECT_EQ(a, (std::vector<float>{3.0f, 4.0f}));
  const std::vector<std::span<const float>> view{a};
  EXPECT_DOUBLE_EQ(global_norm(view), 5.0);
}

TEST(Clip, NonFiniteNormIsReturnedAndGradientsKept) {
  std::vector<float> a{1.0f, std::numeric_limits<float>::quiet_NaN()};
  std::vector<float> b{std::numeric_limits<float>::infinity(), 2.0f};
  const std::vector<std::span<float>> nan_grads{a}, inf_grads{b};
  EXPECT_TRUE(std::isnan(clip_by_global_norm(nan_grads, 1.0)));
  EXPECT_EQ(a[0], 1.0f);
  EXPECT_TRUE(std::isinf(clip_by_global_norm(inf_grads, 1.0)));
  EXPECT_EQ(b[1], 2.0f);
}

TEST(Clip, EmptyAndInvalid) {
  const std::vector<std::span<float>> none;
  EXPECT_EQ(clip_by_global_norm(none, 1.0), 0.0);
  EXPECT_THROW(clip_by_global_norm(none, -1.0), Error);
}

}  // namespace
}  // namespace lowcomm
