// majority_vote (signSGD / Signum with majority vote) against a plain simulation written here
// from the paper's rule, not from the compressor: each simulated rank's vote is the sign bit of
// its gradient (or of its momentum m ← β·m + (1 − β)·g), the aggregate is the sign of the votes'
// sum, 0 on a tie. At 1 to 5 ranks over several steps, with ties forced, plus the exact wire
// size, the refusal of a NaN and of a malformed payload, and the momentum through a checkpoint.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "loopback.hpp"
#include "lowcomm/compress/registry.hpp"
#include "lowcomm/error.hpp"

namespace lowcomm {
namespace {

std::unique_ptr<Compressor> make(double momentum) {
  ConfigSchema schema;
  CompressorRegistry::global().add_config_keys(schema);
  return CompressorRegistry::global().create(Config::defaults(
      schema, std::vector<std::string>{"compressor.name=majority_vote",
                                       "compressor.majority_vote.momentum=" + std::to_string(momentum)}));
}

// The unit's shape is a span: its storage outlives every context made from it.
UnitContext unit_of(std::int64_t n, std::uint64_t step) {
  static std::vector<std::vector<std::int64_t>> shapes;
  shapes.push_back({n});
  return UnitContext{.step = step, .unit_id = 3, .name = "w", .shape = shapes.back()};
}

// Gradients with exact zeros of both signs and, at every fourth entry, ranks paired with
// opposite values, so that an even number of ranks ties there.
std::vector<std::vector<float>> gradients(int world, std::int64_t n, unsigned seed) {
  std::mt19937 random(seed);
  std::normal_distribution<float> normal;
  std::vector<std::vector<float>> g(static_cast<std::size_t>(world), std::vector<float>(static_cast<std::size_t>(n)));
  for (std::size_t i = 0; i < static_cast<std::size_t>(n); ++i) {
    for (int w = 0; w < world; ++w) {
      float& x = g[static_cast<std::size_t>(w)][i];
      x = normal(random);
      if (i % 4 == 0 && w % 2 == 1) x = -g[static_cast<std::size_t>(w - 1)][i];
      if (i % 13 == 5) x = (w % 2 == 0) ? 0.0f : -0.0f;
    }
  }
  return g;
}

TEST(MajorityVote, IsTheSignOfTheVotesSumAtEveryRankCount) {
  constexpr std::int64_t n = 203;  // not a multiple of 8: the last byte is partly padding
  for (const double beta : {0.0, 0.9}) {
    for (int world = 1; world <= 5; ++world) {
      std::vector<std::unique_ptr<Compressor>> ranks;
      for (int w = 0; w < world; ++w) ranks.push_back(make(beta));
      std::vector<std::vector<float>> momentum(static_cast<std::size_t>(world), std::vector<float>(n, 0.0f));
      std::size_t ties = 0;
      for (std::uint64_t step = 0; step < 4; ++step) {
        const auto g = gradients(world, n, 17 * static_cast<unsigned>(step) + static_cast<unsigned>(world));
        const auto got = test::loopback_unit(ranks, unit_of(n, step), g);
        for (std::size_t i = 0; i < static_cast<std::size_t>(n); ++i) {
          int votes = 0;
          for (int w = 0; w < world; ++w) {
            float& m = momentum[static_cast<std::size_t>(w)][i];
            const float b = static_cast<float>(beta);
            m = beta > 0.0 ? b * m + (1.0f - b) * g[static_cast<std::size_t>(w)][i] : g[static_cast<std::size_t>(w)][i];
            votes += std::signbit(m) ? -1 : 1;
          }
          const float want = votes > 0 ? 1.0f : votes < 0 ? -1.0f : 0.0f;
          ties += votes == 0;
          for (int w = 0; w < world; ++w) {
            ASSERT_EQ(got[static_cast<std::size_t>(w)][i], want)
                << "beta " << beta << ", " << world << " ranks, step " << step << ", entry " << i;
          }
        }
      }
      if (world % 2 == 0) EXPECT_GT(ties, 0u) << world << " ranks: the test forces ties";
    }
  }
}

TEST(MajorityVote, SendsOneBitPerValue) {
  const auto compressor = make(0.0);
  for (const std::int64_t n : {1, 8, 9, 203}) {
    EXPECT_EQ(compressor->wire_bytes(unit_of(n, 0), 0), static_cast<std::uint64_t>((n + 7) / 8));
  }
  EXPECT_EQ(compressor->aggregation(), Aggregation::Gathered);
}

TEST(MajorityVote, RefusesANanAndAPayloadOfTheWrongSize) {
  std::vector<std::unique_ptr<Compressor>> ranks;
  ranks.push_back(make(0.0));
  ranks.push_back(make(0.0));
  std::vector<std::vector<float>> g(2, std::vector<float>(20, 1.0f));
  g[1][7] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_THROW(test::loopback_unit(ranks, unit_of(20, 0), g), Error);

  UnitScratch scratch;
  UnitContext unit = unit_of(20, 0);
  unit.world_size = 2;
  (void)ranks[0]->encode(unit, std::vector<float>(20, 1.0f), scratch);
  const std::vector<std::byte> good(3), short_payload(2);
  Received received;
  received.gathered = {good, short_payload};
  std::vector<float> aggregate(20);
  try {
    (void)ranks[0]->decode(unit, 0, received, scratch, aggregate);
    ADD_FAILURE() << "a 2-byte payload for 20 values was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("rank 1 sent 2 bytes"), std::string::npos) << e.what();
  }
}

// The momentum is state: saved after two steps and restored into a fresh compressor, the third
// step votes as the uninterrupted one does.
TEST(MajorityVote, MomentumSurvivesACheckpoint) {
  constexpr std::int64_t n = 50;
  std::vector<std::unique_ptr<Compressor>> straight, resumed;
  for (int w = 0; w < 3; ++w) {
    straight.push_back(make(0.5));
    resumed.push_back(make(0.5));
  }
  for (std::uint64_t step = 0; step < 3; ++step) {
    const auto g = gradients(3, n, 100 + static_cast<unsigned>(step));
    if (step == 2) {
      for (auto& compressor : resumed) {
        StateDict state;
        compressor->save_state(state, "c/");
        EXPECT_EQ(state.float_keys(), std::vector<std::string>{"c/momentum/3"});
        compressor = make(0.5);
        compressor->load_state(state, "c/");
      }
    }
    EXPECT_EQ(test::loopback_unit(straight, unit_of(n, step), g), test::loopback_unit(resumed, unit_of(n, step), g))
        << "step " << step;
  }
  StateDict foreign;
  foreign.put("c/momentum/x", std::vector<float>{1.0f});
  EXPECT_THROW(make(0.5)->load_state(foreign, "c/"), Error);
}

}  // namespace
}  // namespace lowcomm
