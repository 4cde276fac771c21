// The `zero_one_adam` strategy (0/1 Adam) against a float64 transcription of DeepSpeed's
// ZeroOneAdam step (tests/fixtures/make_zero_one_adam_fixture.py → zero_one_adam.h5), at the
// world size of this run (1 to 4), with small scalers so that a short run passes through every
// kind of step: variance refreshes on the all-reduced gradient at a doubling interval, 1-bit
// gradients between them, the freeze, local steps, and synchronisations at intervals 1, 2 and 4.
// After every step: this rank's parameters (they differ between synchronisations), moments,
// accumulated update and error buffers; what each kind of step sends; a checkpoint between two
// synchronisations resumed bitwise.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <fmt/format.h>

#include "rank_trajectory.hpp"
#include "lowcomm/comm/communicator.hpp"
#include "lowcomm/config/config.hpp"
#include "lowcomm/error.hpp"
#include "lowcomm/strategy/registry.hpp"
#include "support/test_backend.hpp"

namespace lowcomm::test {
namespace {

const auto* const kSkipWithoutBackend = ::testing::AddGlobalTestEnvironment(new SkipWithoutTestBackend);

const std::vector<TensorInfo> kTensors = {{"matrix", {6, 5}}, {"vector", {7}}};

// What step s did, as the fixture's "kind" dataset says.
enum Kind : std::int64_t { kVarianceRefresh = 0, kOnebitGradient = 1, kLocalStep = 2, kSynchronisation = 3 };

struct ZeroOneCase : RankTrajectory {
  ZeroOneCase() : RankTrajectory(LOWCOMM_ZERO_ONE_ADAM_FIXTURE, "", kTensors) { group = "/w" + std::to_string(w); }

  std::size_t padded() const { return static_cast<std::size_t>(file.attr_int(group, "padded_size")); }
  std::vector<std::int64_t> kinds() const { return file.ints(group + "/kind"); }

  std::unique_ptr<Strategy> make(Communicator& comm) const {
    ConfigSchema schema;
    add_strategy_keys(schema);
    std::vector<std::string> settings{"strategy.name=zero_one_adam"};
    for (const char* key : {"var_freeze_step", "var_update_scaler", "local_step_scaler", "local_step_clipper"}) {
      settings.push_back(fmt::format("strategy.zero_one_adam.{}={}", key, file.attr_int(group, key)));
    }
    for (const char* key : {"beta1", "beta2", "eps", "weight_decay"}) {
      settings.push_back(fmt::format("strategy.zero_one_adam.{}={}", key, file.attr_double(group, key)));
    }
    return StrategyRegistry::global().create({.comm = comm,
                                              .tensors = kTensors,
                                              .config = Config::defaults(schema, settings),
                                              .seed = 0,
                                              .execution = test_execution()});
  }
  StrategyStepReport step(Strategy& strategy, std::size_t s, std::vector<std::vector<float>>& params) const {
    return RankTrajectory::step(strategy, s, file.doubles(group + "/lr")[s], params);
  }
  // This rank's row of step s of a [steps, W, *shape] quantity, every tensor joined in order.
  std::vector<double> joined(const std::string& quantity, std::size_t s) const {
    std::vector<double> values;
    for (std::size_t t = 0; t < kTensors.size(); ++t) {
      const std::vector<double> part = row(quantity, t, s);
      values.insert(values.end(), part.begin(), part.end());
    }
    return values;
  }
  // This rank's row of step s in a flat [steps, W, size] dataset.
  std::vector<double> flat_row(const std::string& dataset, std::size_t s, std::size_t size) const {
    const std::vector<double> all = file.doubles(group + "/" + dataset);
    const std::size_t at = (s * static_cast<std::size_t>(w) + static_cast<std::size_t>(rank)) * size;
    return {all.begin() + static_cast<std::ptrdiff_t>(at), all.begin() + static_cast<std::ptrdiff_t>(at + size)};
  }
};

TEST(ZeroOneAdamFixture, FollowsTheTranscriptionAtEveryStep) {
  const ZeroOneCase fixture;
  ASSERT_EQ(fixture.file.attr_int(fixture.group, "world_size"), fixture.w);
  Communicator comm(MPI_COMM_WORLD, CommunicatorOptions{});
  const std::unique_ptr<Strategy> adam = fixture.make(comm);
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
    expect_near_fixture(state.floats("momentum_accumulator"), fixture.joined("momentum_accumulator", s),
                "accumulated update, " + where);
    if (state.integer("has_errors") != 0) {
      expect_near_fixture(state.floats("worker_error"), fixture.flat_row("worker_error", s, n_padded), "worker error, " + where);
      expect_near_fixture(state.floats("server_error"), fixture.flat_row("server_error", s, n_padded / fixture.w),
                  "server error, " + where);
    }
  }
}

// A variance refresh all-reduces the fp32 gradient; a 1-bit gradient or a synchronisation is the
// compressed all-reduce's four collectives, (W − 1)·(N/(4W) + 8) bytes out; a local step sends
// nothing; alone, only the refreshes' (empty) all-reduce is called.
TEST(ZeroOneAdamFixture, EachKindOfStepSendsWhatItShould) {
  const ZeroOneCase fixture;
  Communicator comm(MPI_COMM_WORLD, CommunicatorOptions{});
  const std::unique_ptr<Strategy> adam = fixture.make(comm);
  std::vector<std::vector<float>> params = fixture.init();
  const auto w = static_cast<std::uint64_t>(fixture.w), n = static_cast<std::uint64_t>(fixture.padded());
  const std::vector<std::int64_t> kinds = fixture.kinds();
  for (std::size_t s = 0; s < fixture.steps(); ++s) {
    const StrategyStepReport report = fixture.step(*adam, s, params);
    const std::string where = fmt::format("step {} (kind {})", s, kinds[s]);
    switch (kinds[s]) {
      case kVarianceRefresh:
        EXPECT_EQ(report.sync.comm.calls, 1u) << where;
        EXPECT_EQ(report.sync.payload_bytes, 37 * sizeof(float)) << where;
        break;
      case kOnebitGradient:
      case kSynchronisation:
        EXPECT_EQ(report.sync.comm.calls, w > 1 ? 4u : 0u) << where;
        EXPECT_EQ(report.sync.comm.bytes_sent, (w - 1) * (n / (4 * w) + 8)) << where;
        break;
      case kLocalStep:
        EXPECT_EQ(report.sync.comm.calls, 0u) << where;
        EXPECT_FALSE(report.synchronized) << where;
        break;
      default: FAIL() << where;
    }
  }
}

// Saved after a local step that is not a synchronisation (accumulated update, Σ and counters in
// flight) and restored into a fresh strategy, the run continues bitwise.
TEST(ZeroOneAdamFixture, ARestoredRunContinuesBitwise) {
  const ZeroOneCase fixture;
  const std::vector<std::int64_t> kinds = fixture.kinds();
  std::size_t stop = 0;
  for (std::size_t s = 0; s + 1 < kinds.size(); ++s) {
    if (kinds[s] == kLocalStep) stop = s + 1;
  }
  ASSERT_GT(stop, 0u) << "the fixture has no local step";
  Communicator comm(MPI_COMM_WORLD, CommunicatorOptions{});
  std::vector<std::vector<float>> straight = fixture.init(), resumed = fixture.init();
  const std::unique_ptr<Strategy> a = fixture.make(comm);
  for (std::size_t s = 0; s < fixture.steps(); ++s) fixture.step(*a, s, straight);
  std::unique_ptr<Strategy> b = fixture.make(comm);
  for (std::size_t s = 0; s < stop; ++s) fixture.step(*b, s, resumed);
  StateDict state;
  b->save_state(state, "strategy/");
  b = fixture.make(comm);
  b->load_state(state, "strategy/");
  for (std::size_t s = stop; s < fixture.steps(); ++s) fixture.step(*b, s, resumed);
  EXPECT_EQ(straight, resumed) << "stopped after step " << stop - 1;
}

// A damaged checkpoint is refused with the key named, not trusted: an accumulated update of
// another model's size, a schedule whose interval is 0.
TEST(ZeroOneAdam, RefusesADamagedCheckpoint) {
  const ZeroOneCase fixture;
  Communicator comm(MPI_COMM_WORLD, CommunicatorOptions{});
  const std::unique_ptr<Strategy> adam = fixture.make(comm);
  std::vector<std::vector<float>> params = fixture.init();
  fixture.step(*adam, 0, params);
  StateDict good;
  adam->save_state(good, "");
  StateDict short_accumulator = good;
  short_accumulator.put("momentum_accumulator", std::vector<float>(5, 0.0f));
  EXPECT_THAT([&] { adam->load_state(short_accumulator, ""); },
              testing::ThrowsMessage<Error>(testing::HasSubstr("'momentum_accumulator' holds 5 values")));
  StateDict zero_interval = good;
  zero_interval.put("local_step_interval", std::int64_t{0});
  EXPECT_THAT([&] { adam->load_state(zero_interval, ""); },
              testing::ThrowsMessage<Error>(testing::HasSubstr("is damaged")));
}

}  // namespace
}  // namespace lowcomm::test
