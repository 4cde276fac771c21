// The `demo` strategy against an independent PyTorch implementation of DeMo's step
// (tests/fixtures/make_demo_fixtures.py → demo.h5): parameters and every rank's momentum after
// each of five steps, at the world size of this run (2 or 3), with weight decay, a tensor whose
// first dimension is prime (blocks of length 1) and a 1-D tensor; the same over the top-k
// transport; and the stale pipeline's parameters.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <fmt/format.h>

#include "fixtures/fixtures.hpp"
#include "lowcomm/comm/communicator.hpp"
#include "lowcomm/config/config.hpp"
#include "lowcomm/strategy/registry.hpp"
#include "support/test_backend.hpp"

namespace lowcomm::test {
namespace {

// DeMo computes on the test backend (LOWCOMM_TEST_BACKEND); every test skips where it cannot run.
const auto* const kSkipWithoutBackend = ::testing::AddGlobalTestEnvironment(new SkipWithoutTestBackend);

const std::vector<TensorInfo> kTensors = {
    {"matrix", {16, 24}}, {"prime", {13, 8}}, {"vector", {30}}, {"wide", {4, 40}}};

int world(int (*query)(MPI_Comm, int*)) {
  int value = 0;
  query(MPI_COMM_WORLD, &value);
  return value;
}

enum class Transport { DctTopk, Topk };

// The demo strategy's configuration as the fixture of `group` was made.
Config demo_config(const FixtureFile& file, const std::string& group, bool stale, Transport transport) {
  ConfigSchema schema;
  add_strategy_keys(schema);
  std::vector<std::string> settings{
      "strategy.name=demo",
      fmt::format("strategy.demo.compression_decay={}", file.attr_double(group, "compression_decay")),
      fmt::format("strategy.demo.weight_decay={}", file.attr_double(group, "weight_decay")),
      fmt::format("strategy.demo.pipeline={}", stale ? "stale" : "none")};
  if (transport == Transport::DctTopk) {
    settings.push_back(fmt::format("strategy.demo.compression_topk={}", file.attr_int(group, "compression_topk")));
    settings.push_back(fmt::format("strategy.demo.compression_chunk={}", file.attr_int(group, "compression_chunk")));
  } else {
    settings.emplace_back("strategy.demo.transport=topk");
    settings.emplace_back("compressor.granularity=tensor");
    settings.push_back(fmt::format("compressor.topk.ratio={}", file.attr_double(group, "topk_ratio")));
  }
  return Config::defaults(schema, settings);
}

// One world size's case of demo.h5.
struct FixtureCase {
  int rank = world(MPI_Comm_rank);
  int w = world(MPI_Comm_size);
  std::string group;
  std::size_t steps = 0;
  std::vector<double> lr;
  std::vector<std::vector<float>> init, all_grads;
  Config config;

  FixtureCase(const FixtureFile& file, bool stale, Transport transport = Transport::DctTopk)
      : group((transport == Transport::DctTopk ? "/w" : "/topk_w") + std::to_string(w)),
        config(demo_config(file, group, stale, transport)) {
    steps = static_cast<std::size_t>(file.attr_int(group, "steps"));
    lr = file.doubles(group + "/lr");
    for (const TensorInfo& t : kTensors) {
      init.push_back(file.floats(group + "/init/" + t.name));
      all_grads.push_back(file.floats(group + "/grad/" + t.name));
    }
  }

  // This rank's gradient of tensor t at step s.
  std::vector<float> gradient(std::size_t t, std::size_t s) const {
    const auto n = static_cast<std::size_t>(kTensors[t].numel());
    const auto begin = all_grads[t].begin() +
                       static_cast<std::ptrdiff_t>((s * static_cast<std::size_t>(w) + static_cast<std::size_t>(rank)) * n);
    return {begin, begin + static_cast<std::ptrdiff_t>(n)};
  }

  // Runs step s of `demo` on `params` with this rank's gradients.
  void step(Strategy& demo, std::size_t s, std::vector<std::vector<float>>& params) const {
    std::vector<std::vector<float>> grads;
    std::vector<std::span<float>> p;
    std::vector<std::span<const float>> g;
    for (std::size_t t = 0; t < kTensors.size(); ++t) grads.push_back(gradient(t, s));
    for (std::size_t t = 0; t < kTensors.size(); ++t) {
      p.emplace_back(params[t]);
      g.emplace_back(grads[t]);
    }
    demo.step(s, lr[s], p, g);
  }
};

// Parameters and every rank's momentum after each step against the fixture's.
void expect_reference_trajectory(Transport transport) {
  const FixtureFile file(LOWCOMM_DEMO_FIXTURES);
  const FixtureCase fixture(file, /*stale=*/false, transport);
  ASSERT_EQ(file.attr_int(fixture.group, "world_size"), fixture.w);
  Communicator comm(MPI_COMM_WORLD, CommunicatorOptions{});
  const std::unique_ptr<Strategy> demo =
      StrategyRegistry::global().create({.comm = comm, .tensors = kTensors, .config = fixture.config, .seed = 0,
                                         .execution = test_execution()});

  std::vector<std::vector<float>> params = fixture.init, expected_params, expected_momenta;
  for (const TensorInfo& t : kTensors) {
    expected_params.push_back(file.floats(fixture.group + "/param/" + t.name));
    expected_momenta.push_back(file.floats(fixture.group + "/momentum/" + t.name));
  }
  const auto w = static_cast<std::size_t>(fixture.w), rank = static_cast<std::size_t>(fixture.rank);
  for (std::size_t s = 0; s < fixture.steps; ++s) {
    fixture.step(*demo, s, params);
    StateDict state;
    demo->save_state(state, "");
    for (std::size_t t = 0; t < kTensors.size(); ++t) {
      SCOPED_TRACE(fmt::format("step {}, tensor '{}'", s, kTensors[t].name));
      const auto n = static_cast<std::size_t>(kTensors[t].numel());
      const std::vector<float>& momentum = state.floats(fmt::format("momentum/residual/{}", t));
      for (std::size_t i = 0; i < n; ++i) {
        const float want_param = expected_params[t][s * n + i];
        ASSERT_NEAR(params[t][i], want_param, 1e-5f * (1.0f + std::abs(want_param))) << "parameter " << i;
        const float want_momentum = expected_momenta[t][(s * w + rank) * n + i];
        ASSERT_NEAR(momentum[i], want_momentum, 1e-5f * (1.0f + std::abs(want_momentum))) << "momentum " << i;
      }
    }
  }
}

TEST(DemoFixture, MatchesTheReferenceStepOverSeveralSteps) { expect_reference_trajectory(Transport::DctTopk); }

// DeMo over another transport: global top-k per tensor (ratio 0.1) carries the momentum.
TEST(DemoFixture, TopkTransportMatchesTheReference) { expect_reference_trajectory(Transport::Topk); }

// The pipelined stale step: each step's exchange is in flight until the next step (nothing
// waits for it in between: no save_state), and the parameters follow the reference's stale
// trajectory. A checkpoint taken mid-pipeline (which waits for the exchange) and restored into a
// fresh strategy continues bitwise as the uninterrupted one does.
TEST(DemoFixture, StalePipelineMatchesTheReferenceAndResumesBitwise) {
  const FixtureFile file(LOWCOMM_DEMO_FIXTURES);
  const FixtureCase fixture(file, /*stale=*/true);
  Communicator comm(MPI_COMM_WORLD, CommunicatorOptions{});
  const StrategySetup setup{
      .comm = comm, .tensors = kTensors, .config = fixture.config, .seed = 0, .execution = test_execution()};
  const std::unique_ptr<Strategy> demo = StrategyRegistry::global().create(setup);
  std::vector<std::vector<float>> params = fixture.init, expected;
  for (const TensorInfo& t : kTensors) expected.push_back(file.floats(fixture.group + "/stale_param/" + t.name));

  const std::size_t checkpoint_after = 2;
  StateDict checkpoint;
  std::vector<std::vector<float>> params_at_checkpoint;
  for (std::size_t s = 0; s < fixture.steps; ++s) {
    fixture.step(*demo, s, params);
    for (std::size_t t = 0; t < kTensors.size(); ++t) {
      SCOPED_TRACE(fmt::format("step {}, tensor '{}'", s, kTensors[t].name));
      const auto n = static_cast<std::size_t>(kTensors[t].numel());
      for (std::size_t i = 0; i < n; ++i) {
        const float want = expected[t][s * n + i];
        ASSERT_NEAR(params[t][i], want, 1e-5f * (1.0f + std::abs(want))) << "parameter " << i;
      }
    }
    if (s + 1 == checkpoint_after) {
      demo->save_state(checkpoint, "");
      params_at_checkpoint = params;
    }
  }

  const std::unique_ptr<Strategy> resumed = StrategyRegistry::global().create(setup);
  resumed->load_state(checkpoint, "");
  for (std::size_t s = checkpoint_after; s < fixture.steps; ++s) fixture.step(*resumed, s, params_at_checkpoint);
  EXPECT_EQ(params_at_checkpoint, params) << "resumed from the checkpoint after step " << checkpoint_after;
}

}  // namespace
}  // namespace lowcomm::test
