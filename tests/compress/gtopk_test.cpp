// gTop-k (compressor.topk.exchange = "tree") against tests/fixtures/gtopk.h5, an independent
// simulation (make_gtopk_fixture.py) of the butterfly and the regional tree, with and without
// absent ranks, the merges (ties, exact cancellations), the aggregate and error feedback's
// residual, at W = 1 to 9 simulated ranks in one process: each
// rank's encode, the merge rounds of merge_schedule.hpp run by hand with the compressor's merge,
// each rank's decode. Bit for bit (every operation is one float32 addition or division in a fixed
// order). Also: the schedule's shape, and a malformed payload refused.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cstring>
#include <limits>

#include "fixtures/fixtures.hpp"
#include "lowcomm/compress/error_feedback.hpp"
#include "lowcomm/compress/merge_schedule.hpp"
#include "lowcomm/compress/registry.hpp"
#include "lowcomm/error.hpp"
#include "merge_tree_case.hpp"

namespace lowcomm {
namespace {

const test::FixtureFile& fixture() {
  static const test::FixtureFile file(LOWCOMM_GTOPK_FIXTURE);
  return file;
}

std::unique_ptr<Compressor> tree_topk(std::int64_t k) {
  ConfigSchema schema;
  CompressorRegistry::global().add_config_keys(schema);
  const Config config = Config::defaults(
      schema, std::vector<std::string>{"compressor.name=topk", fmt::format("compressor.topk.k={}", k),
                                       "compressor.topk.exchange=tree", "compressor.topk.error_feedback=true"});
  return CompressorRegistry::global().create(config);
}

// Every rank's aggregate and residual after one step of W simulated ranks.
struct Simulated {
  std::vector<std::vector<float>> aggregates, residuals;
  std::vector<std::int64_t> exchanges;  // rounds each rank sent or received in
};

Simulated simulate(const std::string& group) {
  const auto n = fixture().attr_int(group, "n"), k = fixture().attr_int(group, "k");
  const std::vector<float> input = fixture().floats(group + "/input");
  const test::MergeTreeCase tree(fixture(), group);
  const std::vector<std::int64_t> shape{n};
  const test::InProcessTree run(tree, UnitContext{.unit_id = 0, .name = "v", .shape = shape}, input,
                                [k] { return tree_topk(k); });
  Simulated out{.aggregates = run.aggregates, .residuals = {}, .exchanges = run.exchanges};
  for (const std::unique_ptr<Compressor>& rank : run.ranks) {
    StateDict state;
    rank->save_state(state, "");
    out.residuals.push_back(state.floats("residual/0"));
  }
  return out;
}

class GtopkFixture : public testing::TestWithParam<std::string> {};

TEST_P(GtopkFixture, EqualsTheSimulationBitForBit) {
  const std::string group = GetParam();
  const Simulated got = simulate(group);
  const std::vector<float> aggregate = fixture().floats(group + "/aggregate");
  const std::vector<float> residual = fixture().floats(group + "/residual");
  const std::vector<std::int64_t> exchanges = fixture().ints(group + "/exchanges");
  const std::size_t n = aggregate.size();
  for (std::size_t r = 0; r < got.aggregates.size(); ++r) {
    EXPECT_EQ(got.aggregates[r], aggregate) << group << ", rank " << r;
    const std::vector<float> want(residual.begin() + static_cast<std::ptrdiff_t>(r * n),
                                  residual.begin() + static_cast<std::ptrdiff_t>((r + 1) * n));
    EXPECT_EQ(got.residuals[r], want) << group << ", rank " << r << "'s residual (error feedback)";
    EXPECT_EQ(got.exchanges[r], exchanges[r]) << group << ", rank " << r;
  }
}

INSTANTIATE_TEST_SUITE_P(Worlds, GtopkFixture,
                         testing::Values("/w1", "/w2", "/w3", "/w4", "/w5", "/w6", "/w7", "/w8", "/w9",
                                         "/exact_w1", "/exact_w2", "/exact_w3", "/exact_w4", "/exact_w5",
                                         "/exact_w6", "/exact_w7", "/exact_w8", "/exact_w9",
                                         "/regional_w9_blocks2", "/regional_w7_blocks3", "/regional_w9_regions3",
                                         "/regional_w5_one", "/regional_w1", "/absent_w5", "/absent_w8",
                                         "/absent_regional_w9", "/exact_regional_w9_blocks2",
                                         "/exact_regional_w7_blocks3", "/exact_regional_w9_regions3",
                                         "/exact_absent_w5", "/exact_absent_regional_w9"),
                         [](const testing::TestParamInfo<std::string>& info) { return info.param.substr(1); });

// log2 of the largest power of two at most W butterfly rounds, plus a fold and an unfold when W is
// not a power of two; the unfold and the regional broadcast go one way, and copy.
TEST(MergeSchedule, RoundsOfTheButterfly) {
  EXPECT_TRUE(merge_rounds(1).empty());
  EXPECT_EQ(merge_rounds(2).size(), 1u);
  EXPECT_EQ(merge_rounds(8).size(), 3u);
  const std::vector<MergeRound> six = merge_rounds(6);  // fold (0-4, 1-5), d = 1, 2, unfold
  ASSERT_EQ(six.size(), 4u);
  EXPECT_EQ(six[0].sends_to, (std::vector<int>{4, 5, -1, -1, 0, 1}));
  EXPECT_EQ(six[1].sends_to, (std::vector<int>{1, 0, 3, 2, -1, -1}));
  EXPECT_EQ(six[2].sends_to, (std::vector<int>{2, 3, 0, 1, -1, -1}));
  EXPECT_EQ(six[3].sends_to, (std::vector<int>{4, 5, -1, -1, -1, -1}));
  EXPECT_TRUE(six[3].copy);
  EXPECT_FALSE(six[0].copy);
  EXPECT_EQ(merge_source(six[3], 5), 1);
  EXPECT_EQ(merge_source(six[3], 1), -1);
  EXPECT_THROW(merge_rounds(0), Error);
}

// Two regions of three and two ranks: reduce (d = 1, 2), the representatives 0 and 3 swap, the
// broadcast (d = 2, 1); absent ranks last, each from a present one.
TEST(MergeSchedule, RoundsOfTheRegionsAndTheAbsent) {
  const std::vector<MergeRound> rounds = merge_rounds(5, {0, 0, 0, 1, 1});
  ASSERT_EQ(rounds.size(), 5u);
  EXPECT_EQ(rounds[0].sends_to, (std::vector<int>{-1, 0, -1, -1, 3}));
  EXPECT_EQ(rounds[1].sends_to, (std::vector<int>{-1, -1, 0, -1, -1}));
  EXPECT_EQ(rounds[2].sends_to, (std::vector<int>{3, -1, -1, 0, -1}));
  EXPECT_EQ(rounds[3].sends_to, (std::vector<int>{2, -1, -1, -1, -1}));
  EXPECT_EQ(rounds[4].sends_to, (std::vector<int>{1, -1, -1, 4, -1}));
  EXPECT_TRUE(rounds[3].copy && rounds[4].copy);
  EXPECT_FALSE(rounds[0].copy || rounds[1].copy || rounds[2].copy);
  // Ranks 0 and 2 absent: the butterfly of 1, 3, 4 (fold 1-4, 1-3, unfold 1 -> 4), then rank 0
  // takes the result from 1 and rank 2 from 3.
  const std::vector<MergeRound> absent = merge_rounds(5, {}, {false, true, false, true, true});
  ASSERT_EQ(absent.size(), 4u);
  EXPECT_EQ(absent[0].sends_to, (std::vector<int>{-1, 4, -1, -1, 1}));
  EXPECT_EQ(absent[1].sends_to, (std::vector<int>{-1, 3, -1, 1, -1}));
  EXPECT_EQ(absent[2].sends_to, (std::vector<int>{-1, 4, -1, -1, -1}));
  EXPECT_EQ(absent[3].sends_to, (std::vector<int>{-1, 0, -1, 2, -1}));
  EXPECT_THROW(merge_rounds(2, {}, {false, false}), Error);
  EXPECT_THROW(merge_rounds(3, {0, 1}), Error);
}

// A partner's payload of the wrong size, or repeating an index, is refused by name.
TEST(GtopkMerge, RefusesAMalformedPayload) {
  const auto topk = tree_topk(2);
  const std::vector<std::int64_t> shape{10};
  const UnitContext unit{.unit_id = 0, .name = "v", .shape = shape, .world_size = 2};
  UnitScratch scratch;
  const std::vector<float> input{0, 5, 0, -7, 0, 0, 0, 0, 0, 1};
  const Message mine = topk->encode(unit, input, scratch);
  EXPECT_THAT([&] { (void)topk->merge(unit, mine.bytes, std::span(mine.bytes).first(3)); },
              testing::ThrowsMessage<Error>(testing::HasSubstr("partner's payload for unit 'v' holds 3 bytes")));
  std::vector<std::byte> repeated = mine.bytes;
  std::copy_n(repeated.begin(), 4, repeated.begin() + 4);  // the second int32 index := the first
  EXPECT_THAT([&] { (void)topk->merge(unit, mine.bytes, repeated); },
              testing::ThrowsMessage<Error>(testing::HasSubstr("repeats index")));
  std::vector<std::byte> not_a_number = mine.bytes;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::memcpy(not_a_number.data() + 8, &nan, sizeof nan);  // the first fp32 value, after two int32 indices
  EXPECT_THAT([&] { (void)topk->merge(unit, mine.bytes, not_a_number); },
              testing::ThrowsMessage<Error>(testing::HasSubstr("holds nan")));
}

}  // namespace
}  // namespace lowcomm
