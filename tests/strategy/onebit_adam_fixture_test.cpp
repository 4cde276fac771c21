// The `onebit_adam` strategy (1-bit Adam) against a float64 transcription of DeepSpeed's OnebitAdam
// step and its compressed all-reduce (tests/fixtures/make_onebit_adam_fixture.py →
// onebit_adam.h5), at the world size of this run (1 to 4; on one rank nothing is compressed, as
// in DeepSpeed): three warm-up steps of exact Adam on the averaged gradient, then six of the
// compression stage. After every step: the parameters, both moments, and this rank's worker and
// server errors; the bytes of each stage by hand; a checkpoint in the compression stage resumed
// bitwise; and the refusals.
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
#include "lowcomm/strategy/registry.hpp"
#include "support/test_backend.hpp"

namespace lowcomm::test {
namespace {

const auto* const kSkipWithoutBackend = ::testing::AddGlobalTestEnvironment(new SkipWithoutTestBackend);

const std::vector<TensorInfo> kTensors = {{"matrix", {6, 5}}, {"vector", {7}}};
constexpr std::size_t kParameters = 37;

struct OnebitCase : RankTrajectory {
  OnebitCase() : RankTrajectory(LOWCOMM_ONEBIT_ADAM_FIXTURE, "", kTensors) { group = "/w" + std::to_string(w); }

  std::size_t freeze_step() const { return static_cast<std::size_t>(file.attr_int(group, "freeze_step")); }
  std::size_t padded() const { return static_cast<std::size_t>(file.attr_int(group, "padded_size")); }

  Config config(std::vector<std::string> extra = {}) const {
    ConfigSchema schema;
    add_strategy_keys(schema);
    add_network_keys(schema);
    std::vector<std::string> settings{
        "strategy.name=onebit_adam",
        fmt::format("strategy.onebit_adam.freeze_step={}", freeze_step()),
        fmt::format("strategy.onebit_adam.beta1={}", file.attr_double(group, "beta1")),
        fmt::format("strategy.onebit_adam.beta2={}", file.attr_double(group, "beta2")),
        fmt::format("strategy.onebit_adam.eps={}", file.attr_double(group, "eps")),
        fmt::format("strategy.onebit_adam.weight_decay={}", file.attr_double(group, "weight_decay"))};
    settings.insert(settings.end(), extra.begin(), extra.end());
    return Config::defaults(schema, settings);
  }
  std::unique_ptr<Strategy> make(Communicator& comm, const Config& config) const {
    return StrategyRegistry::global().create(
        {.comm = comm, .tensors = kTensors, .config = config, .seed = 0, .execution = test_execution()});
  }
  StrategyStepReport step(Strategy& strategy, std::size_t s, std::vector<std::vector<float>>& params) const {
    return RankTrajectory::step(strategy, s, file.doubles(group + "/lr")[s], params);
  }
  // Step s of a [steps, *shape] dataset, every tensor flattened and joined in order.
  std::vector<double> joined(const std::string& quantity, std::size_t s) const {
    std::vector<double> values;
    for (const TensorInfo& t : kTensors) {
      const std::vector<double> all = file.doubles(group + "/" + quantity + "/" + t.name);
      const auto n = static_cast<std::ptrdiff_t>(t.numel());
      values.insert(values.end(), all.begin() + static_cast<std::ptrdiff_t>(s) * n,
                    all.begin() + static_cast<std::ptrdiff_t>(s + 1) * n);
    }
    return values;
  }
  // This rank's row of step s in a flat [steps, W, size] dataset.
  std::vector<double> flat_row(const std::string& dataset, std::size_t s, std::size_t size) const {
    const std::vector<double> all = file.doubles(group + "/" + dataset);
    const std::size_t at = (s * static_cast<std::size_t>(w) + static_cast<std::size_t>(rank)) * size;
    const auto begin = all.begin() + static_cast<std::ptrdiff_t>(at);
    return {begin, begin + static_cast<std::ptrdiff_t>(size)};
  }
};

TEST(OnebitAdamFixture, FollowsTheTranscriptionAtEveryStep) {
  const OnebitCase fixture;
  ASSERT_EQ(fixture.file.attr_int(fixture.group, "world_size"), fixture.w);
  Communicator comm(MPI_COMM_WORLD, CommunicatorOptions{});
  const std::unique_ptr<Strategy> adam = fixture.make(comm, fixture.config());
  std::vector<std::vector<float>> params = fixture.init();
  const std::size_t n_padded = fixture.padded();
  for (std::size_t s = 0; s < fixture.steps(); ++s) {
    fixture.step(*adam, s, params);
    const std::string where = fmt::format("step {}, rank {}", s, fixture.rank);
    std::vector<float> flat;
    for (const std::vector<float>& p : params) flat.insert(flat.end(), p.begin(), p.end());
    expect_near_fixture(flat, fixture.joined("param", s), "parameters, " + where);
    StateDict state;
    adam->save_state(state, "");
    expect_near_fixture(state.floats("exp_avg"), fixture.joined("exp_avg", s), "momentum, " + where);
    expect_near_fixture(state.floats("exp_avg_sq"), fixture.joined("exp_avg_sq", s), "variance, " + where);
    const bool compressing = fixture.w > 1 && s >= fixture.freeze_step();
    ASSERT_EQ(state.integer("has_errors"), compressing ? 1 : 0) << where;
    if (compressing) {
      expect_near_fixture(state.floats("worker_error"), fixture.flat_row("worker_error", s, n_padded),
                          "worker error, " + where);
      expect_near_fixture(state.floats("server_error"), fixture.flat_row("server_error", s, n_padded / fixture.w),
                  "server error, " + where);
    }
  }
}

// Warm-up: the fp32 gradient, all-reduced on a ring (2(W-1)/W of it out). Compression: the
// signs' all-to-all and three all-gathers, (W - 1)·(N/(4W) + 8) bytes out, as DeepSpeed sends.
TEST(OnebitAdamFixture, SendsDeepSpeedsBytes) {
  const OnebitCase fixture;
  Communicator comm(MPI_COMM_WORLD, CommunicatorOptions{});
  const std::unique_ptr<Strategy> adam = fixture.make(comm, fixture.config());
  std::vector<std::vector<float>> params = fixture.init();
  const auto w = static_cast<std::uint64_t>(fixture.w), n = static_cast<std::uint64_t>(fixture.padded());
  for (std::size_t s = 0; s < fixture.freeze_step() + 2; ++s) {
    const SyncReport sync = fixture.step(*adam, s, params).sync;
    if (s < fixture.freeze_step()) {
      EXPECT_EQ(sync.payload_bytes, kParameters * sizeof(float)) << "step " << s;
      EXPECT_EQ(sync.comm.calls, 1u) << "step " << s;
    } else if (w > 1) {
      EXPECT_EQ(sync.comm.bytes_sent, (w - 1) * (n / (4 * w) + 8)) << "step " << s;
      EXPECT_EQ(sync.comm.calls, 4u) << "step " << s;
      EXPECT_EQ(sync.payload_bytes, (w - 1) * n / (8 * w) + n / (8 * w) + 8) << "step " << s;
    } else {
      EXPECT_EQ(sync.comm.calls, 0u) << "alone: nothing to compress, step " << s;
    }
  }
}

// Saved after step 4 (in the compression stage: both errors in the checkpoint) and restored into
// a fresh strategy, the run continues bitwise as the uninterrupted one.
TEST(OnebitAdamFixture, ARestoredRunContinuesBitwise) {
  const OnebitCase fixture;
  Communicator comm(MPI_COMM_WORLD, CommunicatorOptions{});
  const Config config = fixture.config();
  std::vector<std::vector<float>> straight = fixture.init(), resumed = fixture.init();
  const std::unique_ptr<Strategy> a = fixture.make(comm, config);
  for (std::size_t s = 0; s < fixture.steps(); ++s) fixture.step(*a, s, straight);
  std::unique_ptr<Strategy> b = fixture.make(comm, config);
  for (std::size_t s = 0; s < 5; ++s) fixture.step(*b, s, resumed);
  StateDict state;
  b->save_state(state, "strategy/");
  b = fixture.make(comm, config);
  b->load_state(state, "strategy/");
  for (std::size_t s = 5; s < fixture.steps(); ++s) fixture.step(*b, s, resumed);
  EXPECT_EQ(straight, resumed);
}

TEST(OnebitAdam, RefusesACompressorAndAbsentPeers) {
  const OnebitCase fixture;
  Communicator comm(MPI_COMM_WORLD, CommunicatorOptions{});
  EXPECT_THAT([&] { (void)fixture.make(comm, fixture.config({"compressor.name=topk"})); },
              testing::ThrowsMessage<ConfigError>(testing::HasSubstr("set compressor.name = \"none\"")));
  EXPECT_THAT([&] { (void)fixture.make(comm, fixture.config({"cluster.dropout=0.1"})); },
              testing::ThrowsMessage<ConfigError>(testing::HasSubstr("no rule for absent peers")));
}

// A checkpoint of another model or world size is refused with the key named.
TEST(OnebitAdam, RefusesStateOfAnotherSize) {
  const OnebitCase fixture;
  Communicator comm(MPI_COMM_WORLD, CommunicatorOptions{});
  const std::unique_ptr<Strategy> adam = fixture.make(comm, fixture.config());
  std::vector<std::vector<float>> params = fixture.init();
  for (std::size_t s = 0; s <= fixture.freeze_step(); ++s) fixture.step(*adam, s, params);
  StateDict good;
  adam->save_state(good, "");
  StateDict short_moment = good;
  short_moment.put("exp_avg_sq", std::vector<float>(36, 1.0f));
  EXPECT_THAT([&] { adam->load_state(short_moment, ""); },
              testing::ThrowsMessage<Error>(testing::HasSubstr("'exp_avg_sq' holds 36 values")));
  if (fixture.w > 1) {
    StateDict short_error = good;
    short_error.put("server_error", std::vector<float>(1, 0.0f));
    EXPECT_THAT([&] { adam->load_state(short_error, ""); },
                testing::ThrowsMessage<Error>(testing::HasSubstr("'server_error' holds 1 values")));
  }
}

}  // namespace
}  // namespace lowcomm::test
