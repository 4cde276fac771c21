// Muon (optim/muon.hpp) and its Newton-Schulz iteration (optim/newton_schulz.hpp) against
// tests/fixtures/muon.h5 (make_muon_fixture.py: the published algorithm in torch, the iteration
// in float32 as lowcomm runs it and in bfloat16 as the reference does), on Reference and Cpu;
// which tensors it orthogonalises; its refusals; a restored state continues bitwise.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "fixtures/fixtures.hpp"
#include "lowcomm/config/config.hpp"
#include "lowcomm/error.hpp"
#include "lowcomm/kernels/backend.hpp"
#include "lowcomm/kernels/execution_context.hpp"
#include "lowcomm/optim/muon.hpp"
#include "lowcomm/optim/newton_schulz.hpp"
#include "lowcomm/optim/registry.hpp"

namespace lowcomm {
namespace {

using kernels::Backend;
using ::testing::HasSubstr;

const test::FixtureFile& fixture() {
  static const test::FixtureFile file(LOWCOMM_MUON_FIXTURE);
  return file;
}

// max |a − b| over max |b|.
double relative_distance(std::span<const float> a, const std::vector<float>& b) {
  double worst = 0, scale = 0;
  for (std::size_t i = 0; i < b.size(); ++i) {
    worst = std::max(worst, std::fabs(double{a[i]} - b[i]));
    scale = std::max(scale, std::fabs(double{b[i]}));
  }
  return worst / scale;
}

// The fixture's tensors (make_muon_fixture.py's names), their shapes read from its `steps` group.
std::vector<TensorInfo> fixture_tensors() {
  const test::FixtureFile& f = fixture();
  const std::vector<std::int64_t> ranks = f.attr_ints("steps", "ranks"), dims = f.attr_ints("steps", "shapes");
  const std::vector<std::string> names = {"wte", "h.0.attn.c_attn.weight", "h.0.attn.c_attn.bias",
                                          "h.0.mlp.c_proj.weight", "ln_f.weight"};
  EXPECT_EQ(ranks.size(), names.size());
  std::vector<TensorInfo> tensors;
  std::size_t at = 0;
  for (std::size_t k = 0; k < names.size() && k < ranks.size(); ++k) {
    const auto first = dims.begin() + static_cast<std::ptrdiff_t>(at);
    tensors.push_back({names[k], std::vector<std::int64_t>(first, first + ranks[k])});
    at += static_cast<std::size_t>(ranks[k]);
  }
  return tensors;
}

// rms(a − b) over rms(b).
double rms_distance(std::span<const float> a, const std::vector<float>& b) {
  double difference = 0, norm = 0;
  for (std::size_t i = 0; i < b.size(); ++i) {
    difference += (double{a[i]} - b[i]) * (double{a[i]} - b[i]);
    norm += double{b[i]} * b[i];
  }
  return std::sqrt(difference / norm);
}

Config muon_config() {
  const test::FixtureFile& f = fixture();
  ConfigSchema schema;
  add_optimizer_keys(schema);
  const auto set = [&](const char* key) {
    return fmt::format("optimizer.muon.{}={}", key, f.attr_double("steps", key));
  };
  return Config::from_string("", schema,
                             std::vector<std::string>{"optimizer.name=muon", set("momentum"), set("weight_decay"),
                                                      set("adamw_lr_scale"), set("adamw_beta1"), set("adamw_beta2"),
                                                      set("adamw_eps"), set("adamw_weight_decay"),
                                                      fmt::format("optimizer.muon.ns_steps={}",
                                                                  f.attr_int("steps", "ns_steps"))});
}

// Every backend of this build (its GEMM runs the iteration); one without a usable device skips.
class MuonOnBackend : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    if (const std::string reason = kernels::unavailable_reason(GetParam()); !reason.empty()) GTEST_SKIP() << reason;
  }
};

// Against float64, 5 iterations in float32 stay within 2e-6 of the largest entry (seen: below
// 1e-6). The reference's bfloat16 iteration lands 2 to 9 % away (rms over rms; each product
// rounds to 8 bits, and the iteration, which stops short of convergence by design, does not pull
// the difference back): this bounds it at 15 %.
TEST_P(MuonOnBackend, NewtonSchulzIsTheIterationInFloat) {
  for (const char* name : {"wide", "tall", "square", "row"}) {
    SCOPED_TRACE(name);
    const std::string group = std::string("newton_schulz/") + name;
    const std::int64_t rows = fixture().attr_int(group, "rows"), cols = fixture().attr_int(group, "cols");
    std::vector<float> matrix = fixture().floats(group + "/g");
    std::vector<float> scratch(newton_schulz_scratch_size(rows, cols));
    orthogonalize_newton_schulz(GetParam(), matrix, rows, cols, 5, scratch);
    const std::vector<double> exact = fixture().doubles(group + "/fp64");
    const double fp32_distance = relative_distance(matrix, std::vector<float>(exact.begin(), exact.end()));
    EXPECT_LT(fp32_distance, 2e-6);
    const double bf16_distance = rms_distance(matrix, fixture().floats(group + "/bf16"));
    EXPECT_LT(bf16_distance, 0.15);
    RecordProperty(std::string(name) + " bf16 distance", std::to_string(bf16_distance));
  }
}

// Four steps of every tensor against the fixture: the AdamW ones and the orthogonalised ones within
// 1e-5 of each tensor's largest value of the float32 iteration, within 1e-2 of the reference's
// bfloat16 one (seen: 2.9e-3 after four steps at lr 0.02).
TEST_P(MuonOnBackend, FourStepsFollowTheFixture) {
  const test::FixtureFile& f = fixture();
  const std::vector<TensorInfo> tensors = fixture_tensors();
  const auto optimizer = make_optimizer(muon_config(), {.execution = {.backend = GetParam()}, .tensors = tensors});
  std::vector<std::vector<float>> params, grads;
  for (std::size_t k = 0; k < tensors.size(); ++k) params.push_back(f.floats(fmt::format("steps/p{}/init", k)));
  const std::vector<double> lrs = f.doubles("steps/lr");
  for (std::size_t t = 0; t < lrs.size(); ++t) {
    std::vector<std::span<float>> p;
    std::vector<std::vector<float>> g;
    std::vector<std::span<const float>> gv;
    for (std::size_t k = 0; k < tensors.size(); ++k) {
      const std::vector<float> all = f.floats(fmt::format("steps/p{}/grad", k));
      const std::size_t n = params[k].size();
      g.emplace_back(all.begin() + static_cast<std::ptrdiff_t>(t * n), all.begin() + static_cast<std::ptrdiff_t>((t + 1) * n));
      p.emplace_back(params[k]);
    }
    for (const auto& x : g) gv.emplace_back(x);
    optimizer->step(p, gv, lrs[t]);
    for (std::size_t k = 0; k < tensors.size(); ++k) {
      SCOPED_TRACE(fmt::format("step {} tensor {}", t, tensors[k].name));
      const std::size_t n = params[k].size();
      const auto row = [&](const char* which) {
        const std::vector<float> all = f.floats(fmt::format("steps/p{}/{}", k, which));
        return std::vector<float>(all.begin() + static_cast<std::ptrdiff_t>(t * n),
                                  all.begin() + static_cast<std::ptrdiff_t>((t + 1) * n));
      };
      EXPECT_LT(relative_distance(params[k], row("fp32")), 1e-5);
      EXPECT_LT(relative_distance(params[k], row("bf16")), 1e-2);
    }
  }
  EXPECT_EQ(optimizer->steps(), static_cast<std::int64_t>(lrs.size()));
}

INSTANTIATE_TEST_SUITE_P(Backends, MuonOnBackend, ::testing::ValuesIn(available_backends()),
                         [](const auto& info) { return std::string(kernels::to_string(info.param)); });

TEST(Muon, OrthogonalisesTheHiddenMatricesOnly) {
  const std::vector<TensorInfo> tensors = {{"wte", {10, 4}},          {"wpe", {8, 4}},
                                           {"h.0.attn.c_attn.weight", {12, 4}}, {"h.0.attn.c_attn.bias", {12}},
                                           {"lm_head.weight", {10, 4}}, {"h.1.mlp.c_fc.weight", {16, 4}},
                                           {"scalar", {}}};
  const Muon muon({}, {.tensors = tensors});
  const std::vector<bool> expected = {false, false, true, false, false, true, false};
  for (std::size_t i = 0; i < tensors.size(); ++i) EXPECT_EQ(muon.orthogonalised(i), expected[i]) << tensors[i].name;
  MuonOptions own_patterns;
  own_patterns.adamw_tensors = " h.1.* ";
  const Muon other(own_patterns, {.tensors = tensors});
  EXPECT_TRUE(other.orthogonalised(0));
  EXPECT_FALSE(other.orthogonalised(5));
}

TEST(Muon, RefusesWhatItCannotUse) {
  EXPECT_THAT([] { (void)make_optimizer(muon_config()); },
              ::testing::ThrowsMessage<ConfigError>(HasSubstr("needs the tensors' names and shapes")));
  MuonOptions bad;
  bad.adamw_beta2 = 1.0;
  EXPECT_THAT([&] { bad.validate(); }, ::testing::ThrowsMessage<ConfigError>(HasSubstr("optimizer.muon.adamw_beta2 = 1")));
  bad = {};
  bad.momentum = 1.0;
  EXPECT_THAT([&] { bad.validate(); }, ::testing::ThrowsMessage<ConfigError>(HasSubstr("optimizer.muon.momentum = 1")));
  Muon muon({}, {.tensors = {{"w", {3, 2}}}});
  std::vector<float> p(5), g(5);
  std::vector<std::span<float>> params = {p};
  std::vector<std::span<const float>> grads = {g};
  EXPECT_THROW(muon.step(params, grads, 0.1), Error);  // 5 values for a 3 x 2 tensor
}

TEST(Muon, ARestoredStateContinuesBitwise) {
  const std::vector<TensorInfo> tensors = fixture_tensors();
  const OptimizerSetup setup{.tensors = tensors};
  const Config config = muon_config();
  std::vector<std::vector<float>> a, b, grads;
  for (std::size_t k = 0; k < tensors.size(); ++k) {
    a.push_back(fixture().floats(fmt::format("steps/p{}/init", k)));
    grads.push_back(std::vector<float>(a.back().size()));
    for (std::size_t i = 0; i < grads.back().size(); ++i) grads.back()[i] = std::sin(static_cast<float>(i + 7 * k));
  }
  b = a;
  const auto views = [](std::vector<std::vector<float>>& v) {
    return std::vector<std::span<float>>(v.begin(), v.end());
  };
  const std::vector<std::span<const float>> g(grads.begin(), grads.end());
  const auto first = make_optimizer(config, setup);
  for (int step = 0; step < 4; ++step) first->step(views(a), g, 0.02);
  auto second = make_optimizer(config, setup);
  for (int step = 0; step < 2; ++step) second->step(views(b), g, 0.02);
  StateDict state;
  second->save_state(state, "optimizer/");
  second = make_optimizer(config, setup);
  second->load_state(state, "optimizer/");
  for (int step = 0; step < 2; ++step) second->step(views(b), g, 0.02);
  EXPECT_EQ(a, b);
  EXPECT_EQ(second->steps(), 4);
}

}  // namespace
}  // namespace lowcomm
