// The `desloc` strategy (DES-LOC) against an independent float64 simulation of the paper's update
// (tests/fixtures/make_desloc_fixture.py → desloc.h5): every rank's parameters and first moment
// after each of 13 steps with K_x = 2, K_u = 3, K_v = 6, at the world size of this run (1 to 4);
// a checkpoint taken between averages continues bitwise; the refusals.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <fmt/format.h>

#include "rank_trajectory.hpp"
#include "lowcomm/comm/communicator.hpp"
#include "lowcomm/config/config.hpp"
#include "lowcomm/error.hpp"
#include "lowcomm/optim/registry.hpp"
#include "lowcomm/strategy/registry.hpp"
#include "support/test_backend.hpp"

namespace lowcomm::test {
namespace {

const auto* const kSkipWithoutBackend = ::testing::AddGlobalTestEnvironment(new SkipWithoutTestBackend);

const std::vector<TensorInfo> kTensors = {{"matrix", {6, 5}}, {"vector", {7}}};

Config desloc_config(const FixtureFile& file, const std::string& group, std::vector<std::string> extra = {}) {
  ConfigSchema schema;
  add_strategy_keys(schema);
  std::vector<std::string> settings{
      "strategy.name=desloc", "optimizer.name=adamw",
      fmt::format("strategy.desloc.param_period={}", file.attr_int(group, "K_x")),
      fmt::format("strategy.desloc.first_moment_period={}", file.attr_int(group, "K_u")),
      fmt::format("strategy.desloc.second_moment_period={}", file.attr_int(group, "K_v")),
      fmt::format("optimizer.adamw.beta1={}", file.attr_double(group, "beta1")),
      fmt::format("optimizer.adamw.beta2={}", file.attr_double(group, "beta2")),
      fmt::format("optimizer.adamw.eps={}", file.attr_double(group, "eps")),
      fmt::format("optimizer.adamw.weight_decay={}", file.attr_double(group, "weight_decay"))};
  settings.insert(settings.end(), extra.begin(), extra.end());
  return Config::defaults(schema, settings);
}

// The trajectories of this run's world size, with each step's learning rate.
struct FixtureCase : RankTrajectory {
  FixtureCase() : RankTrajectory(LOWCOMM_DESLOC_FIXTURE, "", kTensors) {
    group = "/w" + std::to_string(w);
    lr = file.doubles(group + "/lr");
  }
  std::vector<double> lr;
  StrategyStepReport step(Strategy& strategy, std::size_t s, std::vector<std::vector<float>>& params) const {
    return RankTrajectory::step(strategy, s, lr[s], params);
  }
};

// Float32 arithmetic against float64: within 2e-5 of each value (plus 2e-5 absolute).
TEST(DeslocFixture, ParametersAndMomentsFollowTheSimulationAtEveryStep) {
  const FixtureCase fixture;
  ASSERT_EQ(fixture.file.attr_int(fixture.group, "world_size"), fixture.w);
  Communicator comm(MPI_COMM_WORLD, CommunicatorOptions{});
  const Config config = desloc_config(fixture.file, fixture.group);
  const std::unique_ptr<Strategy> desloc = StrategyRegistry::global().create(
      {.comm = comm, .tensors = kTensors, .config = config, .seed = 0, .execution = test_execution()});
  std::vector<std::vector<float>> params = fixture.init();
  for (std::size_t s = 0; s < fixture.steps(); ++s) {
    fixture.step(*desloc, s, params);
    StateDict state;
    desloc->save_state(state, "");
    for (std::size_t t = 0; t < kTensors.size(); ++t) {
      SCOPED_TRACE(fmt::format("step {}, tensor '{}'", s, kTensors[t].name));
      const std::vector<double> want_param = fixture.row("param", t, s);
      const std::vector<double> want_moment = fixture.row("exp_avg", t, s);
      const std::vector<float>& moment = state.floats(fmt::format("optimizer/exp_avg/{}", t));
      for (std::size_t i = 0; i < want_param.size(); ++i) {
        ASSERT_NEAR(params[t][i], want_param[i], 2e-5 * (1.0 + std::abs(want_param[i]))) << "parameter " << i;
        ASSERT_NEAR(moment[i], want_moment[i], 2e-5 * (1.0 + std::abs(want_moment[i]))) << "first moment " << i;
      }
    }
  }
}

// Stopped after step 7 (t = 8: between the averages of every quantity) and restored into a
// fresh strategy, the run continues bitwise as the uninterrupted one.
TEST(DeslocFixture, ARestoredRunContinuesBitwise) {
  const FixtureCase fixture;
  Communicator comm(MPI_COMM_WORLD, CommunicatorOptions{});
  const Config config = desloc_config(fixture.file, fixture.group);
  const StrategySetup setup{.comm = comm, .tensors = kTensors, .config = config, .seed = 0, .execution = test_execution()};
  std::vector<std::vector<float>> straight = fixture.init(), resumed = fixture.init();
  const std::unique_ptr<Strategy> a = StrategyRegistry::global().create(setup);
  for (std::size_t s = 0; s < fixture.steps(); ++s) fixture.step(*a, s, straight);
  std::unique_ptr<Strategy> b = StrategyRegistry::global().create(setup);
  for (std::size_t s = 0; s < 8; ++s) fixture.step(*b, s, resumed);
  StateDict state;
  b->save_state(state, "strategy/");
  b = StrategyRegistry::global().create(setup);
  b->load_state(state, "strategy/");
  for (std::size_t s = 8; s < fixture.steps(); ++s) fixture.step(*b, s, resumed);
  EXPECT_EQ(straight, resumed);
}

TEST(DeslocFixture, RefusesAnOptimizerWithoutAdamsMoments) {
  const FixtureCase fixture;
  Communicator comm(MPI_COMM_WORLD, CommunicatorOptions{});
  const Config config = desloc_config(fixture.file, fixture.group, {"optimizer.name=sgd"});
  EXPECT_THAT([&] {
    (void)StrategyRegistry::global().create(
        {.comm = comm, .tensors = kTensors, .config = config, .seed = 0, .execution = test_execution()});
  }, ::testing::ThrowsMessage<ConfigError>(::testing::HasSubstr("set optimizer.name = \"adamw\" (got \"sgd\")")));
}

}  // namespace
}  // namespace lowcomm::test
