// The optimizers' contract: configuration and validation, argument checks, torch's special
// cases, and save/restore that continues bitwise identically.
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "lowcomm/error.hpp"
#include "lowcomm/optim/adamw.hpp"
#include "lowcomm/optim/registry.hpp"
#include "lowcomm/optim/sgd.hpp"
#include "lowcomm/optim/signum.hpp"

namespace lowcomm {
namespace {

Config optimizer_config(std::vector<std::string> overrides) {
  ConfigSchema schema;
  add_optimizer_keys(schema);
  return Config::defaults(schema, overrides);
}

struct Tensors {
  std::vector<std::vector<float>> values;
  std::vector<std::span<float>> spans() {
    return {values.begin(), values.end()};
  }
  std::vector<std::span<const float>> const_spans() const {
    return {values.begin(), values.end()};
  }
};

Tensors random_tensors(std::uint32_t seed, std::vector<std::size_t> sizes) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  Tensors t;
  for (const std::size_t n : sizes) {
    t.values.emplace_back(n);
    for (float& x : t.values.back()) x = normal(rng);
  }
  return t;
}

void expect_config_error(const std::vector<std::string>& overrides, const std::string& key) {
  try {
    (void)make_optimizer(optimizer_config(overrides));
    ADD_FAILURE() << "no ConfigError, expected one naming " << key;
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
  }
}

TEST(Optimizer, DefaultsToAdamW) {
  const auto opt = make_optimizer(optimizer_config({}));
  EXPECT_EQ(opt->name(), "adamw");
  const Config c = optimizer_config({});
  EXPECT_DOUBLE_EQ(c.get_double("optimizer.adamw.weight_decay"), 0.01);
  EXPECT_DOUBLE_EQ(c.get_double("optimizer.adamw.beta2"), 0.999);
  EXPECT_DOUBLE_EQ(c.get_double("optimizer.signum.beta"), 0.9);
  EXPECT_EQ(make_optimizer(optimizer_config({"optimizer.name=sgd"}))->name(), "sgd");
  EXPECT_EQ(make_optimizer(optimizer_config({"optimizer.name=signum"}))->name(), "signum");
}

TEST(Optimizer, OtherPrefix) {
  ConfigSchema schema;
  add_optimizer_keys(schema, "inner");
  const Config c = Config::defaults(schema, std::vector<std::string>{"inner.name=sgd"});
  EXPECT_EQ(make_optimizer(c, {}, "inner")->name(), "sgd");
}

TEST(Optimizer, RejectsWhatTorchRejects) {
  expect_config_error({"optimizer.adamw.beta1=1"}, "optimizer.adamw.beta1");
  expect_config_error({"optimizer.adamw.beta2=1.0"}, "optimizer.adamw.beta2");
  expect_config_error({"optimizer.adamw.eps=0"}, "optimizer.adamw.eps");
  expect_config_error({"optimizer.adamw.weight_decay=-0.1"}, "optimizer.adamw.weight_decay");
  expect_config_error({"optimizer.name=sgd", "optimizer.sgd.nesterov=true"},
                      "optimizer.sgd.nesterov");
  expect_config_error({"optimizer.name=sgd", "optimizer.sgd.nesterov=true",
                       "optimizer.sgd.momentum=0.9", "optimizer.sgd.dampening=0.1"},
                      "optimizer.sgd.nesterov");
  expect_config_error({"optimizer.name=sgd", "optimizer.sgd.momentum=-0.5"},
                      "optimizer.sgd.momentum");
  expect_config_error({"optimizer.name=signum", "optimizer.signum.beta=1"},
                      "optimizer.signum.beta");
  expect_config_error({"optimizer.name=lion"}, "optimizer.name");
  EXPECT_THROW(AdamW({.beta1 = 1.0}), ConfigError);
  EXPECT_THROW(Sgd({.nesterov = true}), ConfigError);
  EXPECT_THROW(Signum({.beta = -0.1}), ConfigError);
}

TEST(Optimizer, ArgumentErrorsNameTheTensorAndModifyNothing) {
  AdamW opt;
  Tensors p = random_tensors(1, {4, 3});
  Tensors g = random_tensors(2, {4, 2});
  const Tensors before = p;
  try {
    opt.step(p.spans(), g.const_spans(), 0.1);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("tensor 1"), std::string::npos) << e.what();
  }
  EXPECT_EQ(p.values, before.values);
  EXPECT_EQ(opt.steps(), 0);
  g = random_tensors(2, {4, 3});
  EXPECT_THROW(opt.step(p.spans(), g.const_spans(), -0.1), Error);
  EXPECT_THROW(opt.step(p.spans(), g.const_spans(), NAN), Error);
  opt.step(p.spans(), g.const_spans(), 0.1);
  // The state now holds sizes {4, 3}: other sizes or another number of tensors are refused.
  Tensors p2 = random_tensors(3, {4, 5});
  Tensors g2 = random_tensors(4, {4, 5});
  try {
    opt.step(p2.spans(), g2.const_spans(), 0.1);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("tensor 1"), std::string::npos) << e.what();
  }
  Tensors p3 = random_tensors(3, {4});
  Tensors g3 = random_tensors(4, {4});
  EXPECT_THROW(opt.step(p3.spans(), g3.const_spans(), 0.1), Error);
}

TEST(Optimizer, SignOfZeroIsZero) {
  // signSGD with a zero gradient leaves the parameters; a positive one moves them by exactly lr.
  Signum opt({.beta = 0.0});
  std::vector<float> p{1.0f, 2.0f, -3.0f};
  const std::vector<float> g{0.0f, 5.0f, -0.25f};
  const std::vector<std::span<float>> ps{p};
  const std::vector<std::span<const float>> gs{g};
  opt.step(ps, gs, 0.5);
  EXPECT_EQ(p, (std::vector<float>{1.0f, 1.5f, -2.5f}));
}

TEST(Optimizer, AdamWFirstStepIsAboutLrTimesSign) {
  // After one step m̂ = g and v̂ = g², so the update is lr·g / (|g| + eps) ≈ lr·sign(g).
  AdamW opt({.weight_decay = 0.0});
  std::vector<float> p{0.0f, 0.0f};
  const std::vector<float> g{0.3f, -2.0f};
  const std::vector<std::span<float>> ps{p};
  const std::vector<std::span<const float>> gs{g};
  opt.step(ps, gs, 0.01);
  EXPECT_NEAR(p[0], -0.01f, 1e-7f);
  EXPECT_NEAR(p[1], 0.01f, 1e-7f);
}

// The vectorised, threaded update against torch's formula written as a plain scalar loop (the
// fixture test holds that formula to torch itself), bitwise, at several thread counts, on tensors
// of 1 element, a prime, and more than the threading threshold.
TEST(Optimizer, AdamWIsThePlainLoopBitwiseAtEveryThreadCount) {
  const std::vector<std::size_t> sizes = {1, 997, 100003};
  const AdamWOptions options{.beta1 = 0.9, .beta2 = 0.95, .eps = 1e-8, .weight_decay = 0.1};
  const double lr = 3e-4;
  // Two steps of the plain loop.
  Tensors want = random_tensors(5, sizes);
  const Tensors grads = random_tensors(6, sizes);
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    std::vector<float> m(sizes[i], 0.0f), v(sizes[i], 0.0f);
    for (int t = 1; t <= 2; ++t) {
      const double bc1 = 1.0 - std::pow(options.beta1, t), bc2 = 1.0 - std::pow(options.beta2, t);
      const auto decay = static_cast<float>(1.0 - lr * options.weight_decay);
      const auto bc2_sqrt = static_cast<float>(std::sqrt(bc2));
      const auto neg_step = static_cast<float>(-(lr / bc1));
      for (std::size_t j = 0; j < sizes[i]; ++j) {
        float& p = want.values[i][j];
        const float g = grads.values[i][j];
        p = p * decay;
        m[j] = m[j] * static_cast<float>(options.beta1) + static_cast<float>(1.0 - options.beta1) * g;
        v[j] = v[j] * static_cast<float>(options.beta2) + static_cast<float>(1.0 - options.beta2) * g * g;
        const float denom = std::sqrt(v[j]) / bc2_sqrt + static_cast<float>(options.eps);
        p = p + neg_step * m[j] / denom;
      }
    }
  }
  for (int threads : {1, 2, 3}) {
    omp_set_num_threads(threads);
    Tensors got = random_tensors(5, sizes);
    AdamW opt(options);
    for (int t = 1; t <= 2; ++t) opt.step(got.spans(), grads.const_spans(), lr);
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      ASSERT_EQ(got.values[i], want.values[i]) << "threads " << threads << " tensor " << i;
    }
  }
  omp_set_num_threads(omp_get_num_procs());
}

// Every optimizer's update is element-wise and split between threads in pieces: three steps give
// the same bits at 1, 2 and 3 threads (tensors of 1, a prime and more than the threading
// threshold of elements; SGD with momentum, Nesterov and weight decay, Signum with decay).
TEST(Optimizer, EveryOptimizerGivesTheSameBitsAtEveryThreadCount) {
  const std::vector<std::size_t> sizes = {1, 997, 100003};
  const std::vector<std::vector<std::string>> configs = {
      {"optimizer.name=adamw"},
      {"optimizer.name=sgd", "optimizer.sgd.momentum=0.9", "optimizer.sgd.nesterov=true",
       "optimizer.sgd.weight_decay=0.01"},
      {"optimizer.name=sgd"},
      {"optimizer.name=signum", "optimizer.signum.weight_decay=0.1"}};
  const Tensors grads = random_tensors(9, sizes);
  for (const auto& config : configs) {
    std::vector<std::vector<float>> first;
    for (int threads : {1, 2, 3}) {
      omp_set_num_threads(threads);
      Tensors params = random_tensors(8, sizes);
      const auto opt = make_optimizer(optimizer_config(config));
      for (int t = 0; t < 3; ++t) opt->step(params.spans(), grads.const_spans(), 1e-2);
      if (first.empty()) first = params.values;
      for (std::size_t i = 0; i < sizes.size(); ++i) {
        ASSERT_EQ(params.values[i], first[i]) << config[0] << " threads " << threads << " tensor " << i;
      }
    }
  }
  omp_set_num_threads(omp_get_num_procs());
}

// Tensors back to back in one buffer (a model's) are updated as one run (Optimizer::update_runs):
// the same bits as separate tensors, and as a buffer whose gradients are apart, so that only some
// tensors merge. The checkpoint holds the same per-tensor state either way.
TEST(Optimizer, RunsOfBackToBackTensorsGiveTheBitsOfSeparateOnes) {
  const std::vector<std::size_t> sizes = {5, 40000, 1, 70001};
  const std::vector<std::vector<std::string>> configs = {
      {"optimizer.name=adamw"},
      {"optimizer.name=sgd", "optimizer.sgd.momentum=0.9", "optimizer.sgd.dampening=0.1"},
      {"optimizer.name=signum", "optimizer.signum.weight_decay=0.1"}};
  const Tensors grads = random_tensors(19, sizes);
  for (const auto& config : configs) {
    Tensors separate = random_tensors(18, sizes);
    std::vector<float> flat_params, flat_grads;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      flat_params.insert(flat_params.end(), separate.values[i].begin(), separate.values[i].end());
      flat_grads.insert(flat_grads.end(), grads.values[i].begin(), grads.values[i].end());
    }
    std::vector<std::span<float>> joined_params;
    std::vector<std::span<const float>> joined_grads;
    std::size_t offset = 0;
    for (const std::size_t n : sizes) {
      joined_params.push_back(std::span(flat_params).subspan(offset, n));
      joined_grads.push_back(std::span<const float>(flat_grads).subspan(offset, n));
      offset += n;
    }
    std::vector<std::span<const float>> split_grads = joined_grads;
    split_grads[2] = grads.const_spans()[2];  // the gradients break into two runs around tensor 2
    const auto a = make_optimizer(optimizer_config(config));
    const auto b = make_optimizer(optimizer_config(config));
    const auto c = make_optimizer(optimizer_config(config));
    std::vector<float> split_params = flat_params;
    std::vector<std::span<float>> split_views;
    offset = 0;
    for (const std::size_t n : sizes) {
      split_views.push_back(std::span(split_params).subspan(offset, n));
      offset += n;
    }
    for (int t = 0; t < 3; ++t) {
      a->step(separate.spans(), grads.const_spans(), 1e-2);
      b->step(joined_params, joined_grads, 1e-2);
      c->step(split_views, split_grads, 1e-2);
    }
    offset = 0;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      const std::vector<float> joined(flat_params.begin() + offset, flat_params.begin() + offset + sizes[i]);
      const std::vector<float> split(split_params.begin() + offset, split_params.begin() + offset + sizes[i]);
      ASSERT_EQ(joined, separate.values[i]) << config[0] << " tensor " << i;
      ASSERT_EQ(split, separate.values[i]) << config[0] << " tensor " << i;
      offset += sizes[i];
    }
    StateDict sa, sb;
    a->save_state(sa, "o/");
    b->save_state(sb, "o/");
    ASSERT_EQ(sa.float_keys(), sb.float_keys());
    for (const std::string& key : sa.float_keys()) ASSERT_EQ(sa.floats(key), sb.floats(key)) << key;
  }
}

TEST(Optimizer, SgdPlainIsPMinusLrG) {
  Sgd opt;
  std::vector<float> p{1.0f, -1.0f};
  const std::vector<float> g{0.5f, 0.25f};
  const std::vector<std::span<float>> ps{p};
  const std::vector<std::span<const float>> gs{g};
  opt.step(ps, gs, 0.5);
  EXPECT_EQ(p, (std::vector<float>{0.75f, -1.125f}));
}

// Runs `total` steps uninterrupted, and `split` steps then save → fresh optimizer → load → the
// rest: the parameters must be bitwise equal.
void expect_bitwise_resume(const std::vector<std::string>& overrides) {
  const Config config = optimizer_config(overrides);
  const std::vector<std::size_t> sizes{12, 5, 1};
  constexpr int total = 7, split = 3;
  Tensors straight = random_tensors(10, sizes), resumed = straight;
  const auto a = make_optimizer(config);
  auto b = make_optimizer(config);
  for (int s = 0; s < total; ++s) {
    const Tensors g = random_tensors(100 + static_cast<std::uint32_t>(s), sizes);
    const double lr = 0.01 * (1.0 + 0.1 * s);
    a->step(straight.spans(), g.const_spans(), lr);
    if (s == split) {
      StateDict state;
      b->save_state(state, "opt/");
      b = make_optimizer(config);
      b->load_state(state, "opt/");
      EXPECT_EQ(b->steps(), split);
      StateDict again;
      b->save_state(again, "opt/");
      EXPECT_EQ(state, again);
    }
    b->step(resumed.spans(), g.const_spans(), lr);
  }
  EXPECT_EQ(straight.values, resumed.values);
  EXPECT_EQ(a->steps(), total);
}

TEST(Optimizer, RestoredContinuesBitwise) {
  expect_bitwise_resume({"optimizer.name=adamw"});
  expect_bitwise_resume({"optimizer.name=sgd"});
  expect_bitwise_resume({"optimizer.name=sgd", "optimizer.sgd.momentum=0.9",
                         "optimizer.sgd.nesterov=true", "optimizer.sgd.weight_decay=0.01"});
  expect_bitwise_resume({"optimizer.name=signum", "optimizer.signum.weight_decay=0.1"});
}

TEST(Optimizer, LoadRejectsMissingOrInconsistentState) {
  AdamW opt;
  StateDict empty;
  EXPECT_THROW(opt.load_state(empty, "x/"), Error);
  // Before any step: nothing but the counters, and the restored optimizer starts fresh.
  StateDict fresh;
  AdamW().save_state(fresh, "x/");
  opt.load_state(fresh, "x/");
  EXPECT_EQ(opt.steps(), 0);
  // A moment of the wrong size names its key.
  Tensors p = random_tensors(1, {3});
  const Tensors g = random_tensors(2, {3});
  opt.step(p.spans(), g.const_spans(), 0.1);
  StateDict state;
  opt.save_state(state, "x/");
  StateDict bad;
  for (const std::string& key : state.keys()) {
    if (key == "x/exp_avg/0") {
      bad.put(key, std::vector<float>{1.0f});
    } else if (state.contains(key) && key.find("exp_avg") != std::string::npos) {
      bad.put(key, state.floats(key));
    } else {
      bad.put(key, state.integer(key));
    }
  }
  try {
    opt.load_state(bad, "x/");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("x/exp_avg/0"), std::string::npos) << e.what();
  }
  EXPECT_EQ(opt.steps(), 1);  // a failed load keeps the state it had
}

// Found by fuzzing (tests/fuzz/hdf5_files): a checkpoint whose step count is INT64_MAX was
// restored, and the next step overflowed it. A count no run reaches names its key instead.
TEST(Optimizer, LoadRejectsAStepCountNoRunReaches) {
  AdamW opt;
  Tensors p = random_tensors(1, {3});
  const Tensors g = random_tensors(2, {3});
  opt.step(p.spans(), g.const_spans(), 0.1);
  StateDict state;
  opt.save_state(state, "x/");
  for (const std::int64_t steps : {std::numeric_limits<std::int64_t>::max(), std::int64_t{-1}}) {
    state.put("x/steps", steps);
    try {
      AdamW().load_state(state, "x/");
      ADD_FAILURE() << "steps " << steps << " accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("x/steps"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace lowcomm
