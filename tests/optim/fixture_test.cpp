// Replays tests/fixtures/optimizers.h5 (torch.optim, torch 1.13, written by
// make_optimizer_fixtures.py) through make_optimizer + LrSchedule + clip_by_global_norm.
//
// Tolerance: after each of the 6 steps, every parameter within kUlps units in the last place of
// torch's value, the ulp taken at the largest of |p before the step|, |ours| and |torch's| (so a
// step that cancels most of p is judged on the scale of its operands, not of the small result).
// We compute the same fp32 operations in the same order, but torch 1.13's CPU kernels (AVX2
// build) fuse `a + alpha·b` into one FMA where our portable loop rounds twice, and torch
// computes the clipping norm and coefficient in fp32 where we use double. Checked once with
// std::fma in sgd.cpp: every SGD case then matched torch bitwise except the clipped one (the
// clip coefficient), so the differences are rounding, not semantics.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "fixtures/fixtures.hpp"
#include "lowcomm/optim/clip.hpp"
#include "lowcomm/optim/lr_schedule.hpp"
#include "lowcomm/optim/registry.hpp"

namespace lowcomm {
namespace {

constexpr double kUlps = 4.0;
constexpr int kTensors = 3;

struct Case {
  const char* name;
  const char* optimizer;
  std::vector<const char*> parameters;  // attributes of the group, keys under optimizer.<name>
};

const std::vector<Case> kCases{
    {"sgd_plain", "sgd", {"momentum", "dampening", "weight_decay"}},
    {"sgd_momentum_clip", "sgd", {"momentum", "dampening", "weight_decay"}},
    {"sgd_nesterov_wd", "sgd", {"momentum", "dampening", "weight_decay"}},
    {"adamw_defaults", "adamw", {"beta1", "beta2", "eps", "weight_decay"}},
    {"adamw_095", "adamw", {"beta1", "beta2", "eps", "weight_decay"}},
    {"signum_09", "signum", {"beta", "weight_decay"}},
    {"signsgd", "signum", {"beta", "weight_decay"}},
};

std::string text(double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.17g", value);
  return buffer;
}

// |a − b| in units of the spacing of floats at `scale`.
double ulps_apart(float a, float b, float scale) {
  const float ulp = std::nextafter(scale, std::numeric_limits<float>::infinity()) - scale;
  return std::fabs(static_cast<double>(a) - static_cast<double>(b)) / ulp;
}

// FixtureFile reads floats; the lr was recorded in double, and should match exactly.
std::vector<double> read_doubles(const char* path, const std::string& dataset) {
  const hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  const hid_t set = file < 0 ? -1 : H5Dopen2(file, dataset.c_str(), H5P_DEFAULT);
  std::vector<double> values;
  if (set >= 0) {
    const hid_t space = H5Dget_space(set);
    values.resize(static_cast<std::size_t>(H5Sget_simple_extent_npoints(space)));
    if (H5Dread(set, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()) < 0)
      values.clear();
    H5Sclose(space);
    H5Dclose(set);
  }
  if (file >= 0) H5Fclose(file);
  if (values.empty()) ADD_FAILURE() << path << ":" << dataset << ": cannot read";
  return values;
}

class OptimizerFixture : public ::testing::TestWithParam<Case> {};

TEST_P(OptimizerFixture, MatchesTorch) {
  const Case& c = GetParam();
  const test::FixtureFile file(LOWCOMM_OPTIMIZER_FIXTURES);
  const std::string group = std::string("/") + c.name;
  const auto attr = [&](const char* name) { return file.attr_double(group, name); };

  std::vector<std::string> overrides{std::string("optimizer.name=") + c.optimizer};
  for (const char* p : c.parameters)
    overrides.push_back(std::string("optimizer.") + c.optimizer + "." + p + "=" + text(attr(p)));
  if (std::string(c.optimizer) == "sgd")
    overrides.push_back(std::string("optimizer.sgd.nesterov=") +
                        (file.attr_int(group, "nesterov") != 0 ? "true" : "false"));
  overrides.push_back("schedule.name=cosine");
  overrides.push_back("schedule.lr=" + text(attr("lr")));
  overrides.push_back("schedule.warmup_steps=" +
                      std::to_string(file.attr_int(group, "warmup_steps")));
  overrides.push_back("schedule.total_steps=" +
                      std::to_string(file.attr_int(group, "total_steps")));
  overrides.push_back("schedule.min_lr_ratio=" + text(attr("min_lr_ratio")));
  ConfigSchema schema;
  add_optimizer_keys(schema);
  add_schedule_keys(schema);
  const Config config = Config::defaults(schema, overrides);
  const auto optimizer = make_optimizer(config);
  const LrSchedule schedule = LrSchedule::from_config(config);
  const double max_norm = attr("max_norm");
  const auto steps = static_cast<std::size_t>(file.attr_int(group, "steps"));

  std::vector<std::vector<float>> params, grads_all, after_all;
  for (int k = 0; k < kTensors; ++k) {
    const std::string t = group + "/p" + std::to_string(k);
    params.push_back(file.floats(t + "/init"));
    grads_all.push_back(file.floats(t + "/grad"));
    after_all.push_back(file.floats(t + "/after"));
  }
  const std::vector<float> norms = max_norm > 0 ? file.floats(group + "/norm")
                                                : std::vector<float>{};
  const std::vector<double> lrs = read_doubles(LOWCOMM_OPTIMIZER_FIXTURES, group + "/lr");

  double worst = 0.0;
  for (std::size_t s = 0; s < steps; ++s) {
    std::vector<std::vector<float>> grads(kTensors);
    for (int k = 0; k < kTensors; ++k) {
      const std::size_t n = params[k].size();
      grads[k].assign(grads_all[k].begin() + static_cast<std::ptrdiff_t>(s * n),
                      grads_all[k].begin() + static_cast<std::ptrdiff_t>((s + 1) * n));
    }
    std::vector<std::span<float>> g(grads.begin(), grads.end());
    if (max_norm > 0) {
      const double norm = clip_by_global_norm(g, max_norm);
      EXPECT_NEAR(norm, norms[s], 1e-6 * norms[s]) << "step " << s;
    }
    const double lr = schedule.at(s);
    EXPECT_EQ(lr, lrs[s]) << "step " << s;  // the same double expression as the Python lambda
    const std::vector<std::span<const float>> gc(grads.begin(), grads.end());
    const std::vector<std::vector<float>> before = params;
    std::vector<std::span<float>> p(params.begin(), params.end());
    optimizer->step(p, gc, lr);
    for (int k = 0; k < kTensors; ++k) {
      const std::size_t n = params[k].size();
      for (std::size_t j = 0; j < n; ++j) {
        const float expected = after_all[k][s * n + j];
        const float scale = std::max({std::fabs(before[k][j]), std::fabs(params[k][j]),
                                      std::fabs(expected)});
        const double d = ulps_apart(params[k][j], expected, scale);
        worst = std::max(worst, d);
        EXPECT_LE(d, kUlps) << c.name << " step " << s << " tensor " << k << " element " << j
                            << ": " << params[k][j] << " vs torch " << expected;
      }
    }
  }
  std::printf("%s: worst difference %.2f ulp\n", c.name, worst);
}

INSTANTIATE_TEST_SUITE_P(Torch, OptimizerFixture, ::testing::ValuesIn(kCases),
                         [](const auto& param_info) { return std::string(param_info.param.name); });

}  // namespace
}  // namespace lowcomm
