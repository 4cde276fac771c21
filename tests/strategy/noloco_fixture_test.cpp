// The `noloco` strategy (NoLoCo) against an independent float64 simulation of its update and of
// the documented pairing rule (tests/fixtures/make_noloco_fixture.py → noloco.h5): every rank's
// parameters after each of 12 steps with H = 3, at the world size of this run (1 to 4, so an odd
// world leaves a rank alone each round), for the published coefficients (γ = β: only the fast
// weights travel), for γ ≠ β (the slow weights travel too) and with a rank absent from a round;
// the bytes of a round; a checkpoint between rounds continues bitwise; the refusal of a compressor.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <fmt/format.h>

#include "rank_trajectory.hpp"
#include "lowcomm/comm/communicator.hpp"
#include "lowcomm/comm/network_config.hpp"
#include "lowcomm/config/config.hpp"
#include "lowcomm/error.hpp"
#include "lowcomm/optim/registry.hpp"
#include "lowcomm/strategy/registry.hpp"
#include "support/test_backend.hpp"

namespace lowcomm::test {
namespace {

const auto* const kSkipWithoutBackend = ::testing::AddGlobalTestEnvironment(new SkipWithoutTestBackend);

const std::vector<TensorInfo> kTensors = {{"matrix", {6, 5}}, {"vector", {7}}};

// One case's trajectories at this run's world size.
struct FixtureCase : RankTrajectory {
  explicit FixtureCase(const std::string& name) : RankTrajectory(LOWCOMM_NOLOCO_FIXTURE, "", kTensors) {
    group = "/" + name + "_w" + std::to_string(w);
  }

  Config config(std::vector<std::string> extra = {}) const {
    ConfigSchema schema;
    add_strategy_keys(schema);
    add_network_keys(schema);
    std::vector<std::string> settings{
        "strategy.name=noloco", "optimizer.name=sgd",
        fmt::format("strategy.noloco.inner_steps={}", file.attr_int(group, "H")),
        fmt::format("strategy.noloco.outer_momentum={}", file.attr_double(group, "alpha")),
        fmt::format("strategy.noloco.outer_lr={}", file.attr_double(group, "beta")),
        fmt::format("strategy.noloco.pull={}", file.attr_double(group, "gamma"))};
    if (const std::int64_t absent = file.attr_int(group, "absent_rank"); absent >= 0) {
      const std::int64_t at = file.attr_int(group, "absent_step");
      settings.push_back(fmt::format("cluster.rank.{}.absent_steps={}-{}", absent, at, at));
    }
    settings.insert(settings.end(), extra.begin(), extra.end());
    return Config::defaults(schema, settings);
  }
  std::unique_ptr<Strategy> make(Communicator& comm, const Config& config) const {
    return StrategyRegistry::global().create({.comm = comm,
                                              .tensors = kTensors,
                                              .config = config,
                                              .seed = static_cast<std::uint64_t>(file.attr_int(group, "seed")),
                                              .execution = test_execution()});
  }
  StrategyStepReport step(Strategy& strategy, std::size_t s, std::vector<std::vector<float>>& params) const {
    return RankTrajectory::step(strategy, s, file.attr_double(group, "lr"), params);
  }
};

class NolocoFixture : public testing::TestWithParam<std::string> {};

// Float32 arithmetic against float64: within 2e-5 of each value (plus 2e-5 absolute).
TEST_P(NolocoFixture, ParametersFollowTheSimulationAtEveryStep) {
  const FixtureCase fixture(GetParam());
  ASSERT_EQ(fixture.file.attr_int(fixture.group, "world_size"), fixture.w);
  Communicator comm(MPI_COMM_WORLD, CommunicatorOptions{});
  const std::unique_ptr<Strategy> noloco = fixture.make(comm, fixture.config());
  std::vector<std::vector<float>> params = fixture.init();
  const std::uint64_t model_bytes = (30 + 7) * sizeof(float);
  const bool both = fixture.file.attr_double(fixture.group, "gamma") != fixture.file.attr_double(fixture.group, "beta");
  for (std::size_t s = 0; s < fixture.steps(); ++s) {
    const StrategyStepReport report = fixture.step(*noloco, s, params);
    const bool round = (s + 1) % 3 == 0;
    EXPECT_EQ(report.synchronized, round) << "step " << s;
    // A paired rank sends its fast weights (and its slow ones when gamma != beta); one alone, nothing.
    if (round) EXPECT_THAT(report.sync.comm.bytes_sent, testing::AnyOf(0u, (both ? 2 : 1) * model_bytes)) << s;
    if (round && fixture.w % 2 == 0 && fixture.file.attr_int(fixture.group, "absent_rank") < 0) {
      EXPECT_EQ(report.sync.comm.bytes_sent, (both ? 2 : 1) * model_bytes) << "an even world pairs everyone";
    }
    // EXPECT, not ASSERT: a rank leaving early would strand its partner in the next exchange.
    for (std::size_t t = 0; t < kTensors.size(); ++t) {
      const std::vector<double> want = fixture.row("param", t, s);
      std::size_t mismatches = 0;
      for (std::size_t i = 0; i < want.size(); ++i) {
        if (std::abs(params[t][i] - want[i]) > 2e-5 * (1.0 + std::abs(want[i])) && mismatches++ < 3) {
          ADD_FAILURE() << "step " << s << ", tensor '" << kTensors[t].name << "' [" << i << "]: " << params[t][i]
                        << " != " << want[i];
        }
      }
      EXPECT_EQ(mismatches, 0u) << "step " << s << ", tensor '" << kTensors[t].name << "'";
    }
  }
}

// Stopped after step 7 (mid-round) and restored into a fresh strategy, the run continues
// bitwise as the uninterrupted one.
TEST_P(NolocoFixture, ARestoredRunContinuesBitwise) {
  const FixtureCase fixture(GetParam());
  Communicator comm(MPI_COMM_WORLD, CommunicatorOptions{});
  const Config config = fixture.config();
  std::vector<std::vector<float>> straight = fixture.init(), resumed = fixture.init();
  const std::unique_ptr<Strategy> a = fixture.make(comm, config);
  for (std::size_t s = 0; s < fixture.steps(); ++s) fixture.step(*a, s, straight);
  std::unique_ptr<Strategy> b = fixture.make(comm, config);
  for (std::size_t s = 0; s < 7; ++s) fixture.step(*b, s, resumed);
  StateDict state;
  b->save_state(state, "strategy/");
  b = fixture.make(comm, config);
  b->load_state(state, "strategy/");
  for (std::size_t s = 7; s < fixture.steps(); ++s) fixture.step(*b, s, resumed);
  EXPECT_EQ(straight, resumed);
}

INSTANTIATE_TEST_SUITE_P(Cases, NolocoFixture, testing::Values("published", "pull", "absent"));

TEST(Noloco, RefusesACompressor) {
  const FixtureCase fixture("published");
  Communicator comm(MPI_COMM_WORLD, CommunicatorOptions{});
  ConfigSchema schema;
  add_strategy_keys(schema);
  const Config config = Config::defaults(schema, std::vector<std::string>{"strategy.name=noloco", "compressor.name=topk"});
  EXPECT_THAT([&] { (void)fixture.make(comm, config); },
              ::testing::ThrowsMessage<ConfigError>(::testing::HasSubstr("set compressor.name = \"none\"")));
}

}  // namespace
}  // namespace lowcomm::test
