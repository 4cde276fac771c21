// DeMo's `pipeline = psyche` (Psyche's DisTrO: 1-bit values, two-step delay, lookahead) against a
// float64 transcription of Psyche's distro.rs and its client's pipeline
// (tests/fixtures/make_psyche_fixture.py → psyche_distro.h5), at the world size of this run (1 to
// 4). The gradient depends on where the forward pass runs (rank r's is a_r ⊙ x + b_{s,r}, computed
// here in float32 at the weights before_forward leaves), so the lookahead's move is checked through
// its effect, as well as directly: the weights at each forward pass, after each step, and every
// rank's momentum before and after its transmitted part left it. Also: a checkpoint mid-pipeline
// continues bitwise, a cancelled step leaves the weights bit for bit, a step without
// before_forward is refused, and the bytes of the 1-bit wire.
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

const std::vector<TensorInfo> kTensors = {
    {"matrix", {16, 24}}, {"prime", {13, 8}}, {"vector", {30}}, {"wide", {4, 40}}};

struct PsycheCase : RankTrajectory {
  PsycheCase() : RankTrajectory(LOWCOMM_PSYCHE_FIXTURE, "", kTensors) { group = "/w" + std::to_string(w); }

  std::vector<double> lr() const { return file.doubles(group + "/lr"); }

  std::unique_ptr<Strategy> make(Communicator& comm) const {
    ConfigSchema schema;
    add_strategy_keys(schema);
    const Config config = Config::defaults(
        schema, std::vector<std::string>{
                    "strategy.name=demo", "strategy.demo.pipeline=psyche", "strategy.demo.wire=compact_1bit",
                    fmt::format("strategy.demo.compression_decay={}", file.attr_double(group, "compression_decay")),
                    fmt::format("strategy.demo.weight_decay={}", file.attr_double(group, "weight_decay")),
                    fmt::format("strategy.demo.compression_topk={}", file.attr_int(group, "compression_topk")),
                    fmt::format("strategy.demo.compression_chunk={}", file.attr_int(group, "compression_chunk"))});
    return StrategyRegistry::global().create(
        {.comm = comm, .tensors = kTensors, .config = config, .seed = 0, .execution = test_execution()});
  }

  // Rank r's gradient at the weights the forward pass sees: a_r ⊙ x + b_{s,r}, in float32.
  std::vector<std::vector<float>> gradients(std::size_t s, const std::vector<std::vector<float>>& at) const {
    std::vector<std::vector<float>> grads;
    for (std::size_t t = 0; t < kTensors.size(); ++t) {
      const auto n = static_cast<std::size_t>(kTensors[t].numel());
      const std::vector<float> all_scales = file.floats(group + "/grad_scale/" + kTensors[t].name);
      const std::vector<float> offset = row<float>("grad_offset", t, s);
      std::vector<float> g(n);
      for (std::size_t i = 0; i < n; ++i) g[i] = all_scales[static_cast<std::size_t>(rank) * n + i] * at[t][i] + offset[i];
      grads.push_back(std::move(g));
    }
    return grads;
  }

  // Step s as the training loop runs it: before_forward, the gradient where it leaves the weights,
  // step. `at_forward` receives the weights of the forward pass.
  StrategyStepReport step(Strategy& demo, std::size_t s, std::vector<std::vector<float>>& params,
                          std::vector<std::vector<float>>* at_forward = nullptr) const {
    const double eta = lr()[s];
    std::vector<std::span<float>> p(params.begin(), params.end());
    demo.before_forward(s, eta, p);
    if (at_forward) *at_forward = params;
    const std::vector<std::vector<float>> grads = gradients(s, params);
    const std::vector<std::span<const float>> g(grads.begin(), grads.end());
    return demo.step(s, eta, p, g);
  }
};

TEST(PsycheFixture, FollowsTheTranscriptionAtEveryStep) {
  const PsycheCase fixture;
  ASSERT_EQ(fixture.file.attr_int(fixture.group, "world_size"), fixture.w);
  Communicator comm(MPI_COMM_WORLD, CommunicatorOptions{});
  const std::unique_ptr<Strategy> demo = fixture.make(comm);
  std::vector<std::vector<float>> params = fixture.init(), at_forward;
  for (std::size_t s = 0; s < fixture.steps(); ++s) {
    fixture.step(*demo, s, params, &at_forward);
    StateDict state;  // waits for the exchange in flight: the values are the same, only later
    demo->save_state(state, "");
    const std::vector<float>& lookahead = state.floats("lookahead");
    std::size_t offset = 0;
    for (std::size_t t = 0; t < kTensors.size(); ++t) {
      const std::string where = fmt::format("step {}, rank {}, tensor '{}'", s, fixture.rank, kTensors[t].name);
      const auto n = static_cast<std::size_t>(kTensors[t].numel());
      expect_near_fixture(at_forward[t], fixture.row("forward_param", t, s), "weights at the forward pass, " + where);
      const std::vector<double> all = fixture.file.doubles(fixture.group + "/param/" + kTensors[t].name);
      const auto after = all.begin() + static_cast<std::ptrdiff_t>(s * n);
      expect_near_fixture(params[t], {after, after + static_cast<std::ptrdiff_t>(n)}, "weights after the step, " + where);
      expect_near_fixture(std::span(lookahead).subspan(offset, n), fixture.row("delta", t, s),
                          "momentum (lookahead), " + where);
      expect_near_fixture(state.floats(fmt::format("momentum/residual/{}", t)), fixture.row("residual", t, s),
                  "momentum less its transmitted part, " + where);
      offset += n;
    }
  }
}

// Each rank sends, per tensor, its coefficients' indices (one byte up to 256 per block, two up to
// 65536) and one bit per coefficient: the fixture counts Psyche's bytes the same way.
TEST(PsycheFixture, SendsPsychesBytes) {
  const PsycheCase fixture;
  Communicator comm(MPI_COMM_WORLD, CommunicatorOptions{});
  const std::unique_ptr<Strategy> demo = fixture.make(comm);
  std::vector<std::vector<float>> params = fixture.init();
  std::int64_t want = 0;
  for (const std::int64_t bytes : fixture.file.attr_ints(fixture.group, "wire_bytes")) want += bytes;
  for (std::size_t s = 0; s < 3; ++s) {
    EXPECT_EQ(fixture.step(*demo, s, params).sync.payload_bytes, static_cast<std::uint64_t>(want)) << "step " << s;
  }
}

// A checkpoint after step 2 holds the aggregate of step 1 (not yet applied), that of step 2 (in
// flight: saving waits for it), the momentum and the lookahead; restored into a fresh strategy,
// the run continues bitwise as the uninterrupted one.
TEST(PsycheFixture, ARestoredRunContinuesBitwise) {
  const PsycheCase fixture;
  Communicator comm(MPI_COMM_WORLD, CommunicatorOptions{});
  std::vector<std::vector<float>> straight = fixture.init(), resumed = fixture.init();
  const std::unique_ptr<Strategy> a = fixture.make(comm);
  for (std::size_t s = 0; s < fixture.steps(); ++s) fixture.step(*a, s, straight);
  std::unique_ptr<Strategy> b = fixture.make(comm);
  for (std::size_t s = 0; s < 3; ++s) fixture.step(*b, s, resumed);
  StateDict state;
  b->save_state(state, "strategy/");
  b = fixture.make(comm);
  b->load_state(state, "strategy/");
  for (std::size_t s = 3; s < fixture.steps(); ++s) fixture.step(*b, s, resumed);
  EXPECT_EQ(straight, resumed);
}

// A step found non-finite after the forward pass is cancelled: the lookahead is undone bit for bit
// and the next step carries on; without before_forward a step is refused.
TEST(PsycheFixture, CancelUndoesTheLookaheadAndAStepNeedsBeforeForward) {
  const PsycheCase fixture;
  Communicator comm(MPI_COMM_WORLD, CommunicatorOptions{});
  const std::unique_ptr<Strategy> demo = fixture.make(comm);
  std::vector<std::vector<float>> params = fixture.init();
  for (std::size_t s = 0; s < 3; ++s) fixture.step(*demo, s, params);
  std::vector<std::span<float>> p(params.begin(), params.end());
  // before_forward(3) applies G_1, then moves the weights; cancel moves them back to after G_1.
  demo->before_forward(3, fixture.lr()[3], p);
  const std::vector<std::vector<float>> grads = fixture.gradients(3, params);
  const std::vector<std::span<const float>> g(grads.begin(), grads.end());
  demo->cancel_step();
  std::vector<std::vector<float>> after_cancel = params;
  demo->before_forward(3, fixture.lr()[3], p);  // nothing left to apply: only the lookahead
  EXPECT_THAT([&] { demo->before_forward(3, fixture.lr()[3], p); },  // moving twice would keep the lookahead
              testing::ThrowsMessage<Error>(testing::HasSubstr("still moved for step 3")));
  demo->cancel_step();
  EXPECT_EQ(params, after_cancel);
  EXPECT_THAT([&] { demo->step(3, fixture.lr()[3], p, g); },
              testing::ThrowsMessage<Error>(testing::HasSubstr("call before_forward(3)")));
  fixture.step(*demo, 3, params);  // and the pipeline goes on
}

// A checkpoint whose lookahead learning rate is not one number is refused.
TEST(PsycheFixture, RefusesADamagedLookahead) {
  const PsycheCase fixture;
  Communicator comm(MPI_COMM_WORLD, CommunicatorOptions{});
  const std::unique_ptr<Strategy> demo = fixture.make(comm);
  std::vector<std::vector<float>> params = fixture.init();
  fixture.step(*demo, 0, params);
  StateDict state;
  demo->save_state(state, "");
  state.put("lookahead_lr", std::vector<float>{0.1f, 0.2f});
  EXPECT_THAT([&] { demo->load_state(state, ""); },
              testing::ThrowsMessage<Error>(testing::HasSubstr("'lookahead_lr' holds 2 values")));
}

}  // namespace
}  // namespace lowcomm::test
