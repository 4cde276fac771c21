// The schedules' formulas (lr_schedule.hpp) against values computed by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include "lowcomm/error.hpp"
#include "lowcomm/optim/lr_schedule.hpp"

namespace lowcomm {
namespace {

Config schedule_config(std::vector<std::string> overrides) {
  ConfigSchema schema;
  add_schedule_keys(schema);
  return Config::defaults(schema, overrides);
}

TEST(LrSchedule, ConstantWithWarmUp) {
  const LrSchedule s({.kind = LrScheduleKind::Constant, .lr = 2.0, .warmup_steps = 4});
  EXPECT_DOUBLE_EQ(s.at(0), 0.5);
  EXPECT_DOUBLE_EQ(s.at(1), 1.0);
  EXPECT_DOUBLE_EQ(s.at(3), 2.0);
  EXPECT_DOUBLE_EQ(s.at(4), 2.0);
  EXPECT_DOUBLE_EQ(s.at(1'000'000), 2.0);
  EXPECT_DOUBLE_EQ(LrSchedule({.lr = 0.3}).at(0), 0.3);  // no warm-up: the peak at once
}

TEST(LrSchedule, CosineHandValues) {
  const LrSchedule s({.kind = LrScheduleKind::Cosine, .lr = 1.0, .warmup_steps = 2,
                      .total_steps = 6, .min_lr_ratio = 0.1});
  const double r = std::sqrt(0.5);  // cos(π/4)
  EXPECT_DOUBLE_EQ(s.at(0), 0.5);
  EXPECT_DOUBLE_EQ(s.at(1), 1.0);
  EXPECT_DOUBLE_EQ(s.at(2), 1.0);  // progress 0: the peak
  EXPECT_DOUBLE_EQ(s.at(3), 0.1 + 0.45 * (1.0 + r));
  EXPECT_DOUBLE_EQ(s.at(4), 0.55);
  EXPECT_DOUBLE_EQ(s.at(5), 0.1 + 0.45 * (1.0 - r));
  EXPECT_DOUBLE_EQ(s.at(6), 0.1);  // the floor from total_steps on
  EXPECT_DOUBLE_EQ(s.at(600), 0.1);
}

TEST(LrSchedule, WsdHandValues) {
  const LrSchedule s({.kind = LrScheduleKind::Wsd, .lr = 1.0, .warmup_steps = 2,
                      .total_steps = 10, .min_lr_ratio = 0.0, .decay_steps = 4});
  const std::vector<double> expected{0.5, 1.0, 1.0, 1.0, 1.0, 1.0, 0.75, 0.5, 0.25, 0.0, 0.0};
  for (std::size_t i = 0; i < expected.size(); ++i) EXPECT_DOUBLE_EQ(s.at(i), expected[i]) << i;
  const LrSchedule floor({.kind = LrScheduleKind::Wsd, .lr = 2.0, .total_steps = 4,
                          .min_lr_ratio = 0.1, .decay_steps = 2});
  EXPECT_DOUBLE_EQ(floor.at(1), 2.0);
  EXPECT_DOUBLE_EQ(floor.at(2), 2.0 * 0.55);
  EXPECT_DOUBLE_EQ(floor.at(3), 2.0 * 0.1);
  EXPECT_DOUBLE_EQ(floor.at(4), 2.0 * 0.1);
}

TEST(LrSchedule, FromConfig) {
  const LrSchedule s = LrSchedule::from_config(
      schedule_config({"schedule.name=cosine", "schedule.lr=0.01", "schedule.warmup_steps=2",
                       "schedule.total_steps=6"}));
  EXPECT_EQ(s.options().kind, LrScheduleKind::Cosine);
  EXPECT_DOUBLE_EQ(s.options().min_lr_ratio, 0.1);
  EXPECT_DOUBLE_EQ(s.at(0), 0.005);
  EXPECT_DOUBLE_EQ(s.at(6), 0.001);
  const LrSchedule c = LrSchedule::from_config(schedule_config({}));
  EXPECT_DOUBLE_EQ(c.at(0), 1e-3);
}

void expect_config_error(const std::vector<std::string>& overrides, const std::string& key) {
  try {
    (void)LrSchedule::from_config(schedule_config(overrides));
    ADD_FAILURE() << "no ConfigError, expected one naming " << key;
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
  }
}

TEST(LrSchedule, RejectsInconsistentKeys) {
  expect_config_error({"schedule.name=cosine"}, "schedule.total_steps");
  expect_config_error({"schedule.name=cosine", "schedule.warmup_steps=5",
                       "schedule.total_steps=5"},
                      "schedule.total_steps");
  expect_config_error({"schedule.name=wsd", "schedule.total_steps=10"}, "schedule.decay_steps");
  expect_config_error({"schedule.name=wsd", "schedule.total_steps=10", "schedule.decay_steps=8",
                       "schedule.warmup_steps=3"},
                      "schedule.total_steps");
  expect_config_error({"schedule.lr=-1"}, "schedule.lr");
  expect_config_error({"schedule.min_lr_ratio=1.5"}, "schedule.min_lr_ratio");
  expect_config_error({"schedule.name=linear"}, "schedule.name");
}

}  // namespace
}  // namespace lowcomm
