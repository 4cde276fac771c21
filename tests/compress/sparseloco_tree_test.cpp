// SparseLoCo's selection over gTop-k's tree (compressor.sparseloco.exchange = "tree") against
// tests/fixtures/sparseloco_tree.h5, an independent numpy simulation
// (make_sparseloco_tree_fixture.py): per-block top-k (templar's k), merges that add values and
// counts and keep the k largest |sum| per block, the butterfly and the regional tree with and
// without absent ranks, ties and zeros, the aggregate (sum / count at each kept entry) and what
// each rank transmits (its own entries among the final k). W = 1 to 7 simulated ranks in one
// process: each rank's encode, the rounds of merge_schedule.hpp run by hand with the compressor's
// merge, each rank's decode. No DCT, so everything is exact: bit for bit. Also: the parts of
// SparseLoCo's wire a tree cannot carry (codebook values, the norm clip) refused.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "fixtures/fixtures.hpp"
#include "lowcomm/compress/merge_schedule.hpp"
#include "lowcomm/compress/registry.hpp"
#include "lowcomm/error.hpp"
#include "merge_tree_case.hpp"

namespace lowcomm {
namespace {

const test::FixtureFile& fixture() {
  static const test::FixtureFile file(LOWCOMM_SPARSELOCO_TREE_FIXTURE);
  return file;
}

Config sparseloco_config(const std::vector<std::string>& settings) {
  ConfigSchema schema;
  CompressorRegistry::global().add_config_keys(schema);
  std::vector<std::string> all{"compressor.name=sparseloco"};
  all.insert(all.end(), settings.begin(), settings.end());
  return Config::defaults(schema, all);
}

std::unique_ptr<Compressor> sparseloco_tree(std::int64_t topk, std::int64_t chunk) {
  return CompressorRegistry::global().create(sparseloco_config(
      {fmt::format("compressor.sparseloco.topk={}", topk), fmt::format("compressor.sparseloco.chunk={}", chunk),
       "compressor.sparseloco.bins=0", "compressor.sparseloco.norm_clip=false", "compressor.sparseloco.exchange=tree"}));
}

class SparseLocoTreeFixture : public testing::TestWithParam<std::string> {};

TEST_P(SparseLocoTreeFixture, EqualsTheSimulationBitForBit) {
  const std::string group = GetParam();
  const auto w = static_cast<int>(fixture().attr_int(group, "world_size"));
  const auto rows = fixture().attr_int(group, "rows"), cols = fixture().attr_int(group, "cols");
  const std::vector<float> input = fixture().floats(group + "/input");
  const test::MergeTreeCase tree(fixture(), group);
  const std::vector<std::int64_t> shape{rows, cols};
  const auto n = static_cast<std::size_t>(rows * cols);
  UnitContext unit{.unit_id = 0, .name = "w", .shape = shape, .world_size = w, .participants = tree.participants()};
  const auto as = [&](int r) {
    unit.rank = r;
    unit.present = tree.present[static_cast<std::size_t>(r)];
    return static_cast<std::size_t>(r);
  };
  std::vector<std::unique_ptr<Compressor>> ranks;
  std::vector<UnitScratch> scratch(static_cast<std::size_t>(w));
  std::vector<std::vector<std::byte>> held;
  for (int r = 0; r < w; ++r) {
    ranks.push_back(sparseloco_tree(fixture().attr_int(group, "topk"), fixture().attr_int(group, "chunk")));
    const std::size_t at = as(r);
    const Message message = ranks.back()->encode(unit, std::span(input).subspan(at * n, n), scratch[at]);
    EXPECT_EQ(message.exchange, Exchange::Merge);
    // 12-bit indices, fp32 sums and uint16 counts per entry.
    const auto entries = fixture().ints(group + "/global_indices").size();
    EXPECT_EQ(message.bytes.size(), 3 * ((entries + 1) / 2) + entries * (4 + 2));
    held.push_back(message.bytes);
  }
  std::vector<std::int64_t> sends(static_cast<std::size_t>(w), 0);
  for (const MergeRound& round : merge_rounds(w, tree.groups, tree.present)) {
    const std::vector<std::vector<std::byte>> before = held;
    for (int r = 0; r < w; ++r) {
      const int from = merge_source(round, r);
      const std::size_t at = as(r);
      if (round.sends_to[at] >= 0) ++sends[at];
      if (from < 0) continue;
      const std::vector<std::byte>& received = before[static_cast<std::size_t>(from)];
      held[at] = round.copy ? received : ranks[at]->merge(unit, before[at], received);
    }
  }
  EXPECT_EQ(sends, fixture().ints(group + "/sends"));

  const std::vector<float> aggregate = fixture().floats(group + "/aggregate");
  const std::vector<float> residual = fixture().floats(group + "/residual");
  for (int r = 0; r < w; ++r) {
    const std::size_t at = as(r);
    EXPECT_EQ(held[at], held[0]) << "rank " << r << " ended with another merge than rank 0";
    Received received;
    received.merged = held[at];
    std::vector<float> got(n, -1.0f);
    EXPECT_FALSE(ranks[at]->decode(unit, 0, received, scratch[at], got));
    EXPECT_EQ(got, aggregate) << "rank " << r;
    if (!unit.present) continue;  // error feedback keeps an absent rank's whole input
    // What error feedback keeps: the input less the entries transmitted.
    const std::span<const float> mine = std::span(input).subspan(at * n, n);
    std::vector<float> kept(mine.begin(), mine.end());
    const Transmitted sent = ranks[at]->transmitted(unit, mine, scratch[at], got);
    ASSERT_EQ(sent.form(), Transmitted::Form::Entries);
    for (std::size_t e = 0; e < sent.indices().size(); ++e) {
      kept[static_cast<std::size_t>(sent.indices()[e])] -= sent.values()[e];
    }
    EXPECT_EQ(kept, std::vector<float>(residual.begin() + static_cast<std::ptrdiff_t>(at * n),
                                       residual.begin() + static_cast<std::ptrdiff_t>((at + 1) * n)))
        << "rank " << r;
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, SparseLocoTreeFixture, testing::ValuesIn(fixture().top_level()),
                         [](const testing::TestParamInfo<std::string>& info) { return info.param.substr(1); });

TEST(SparseLocoTree, RefusesCodebookValuesAndTheNormClip) {
  EXPECT_THAT([] {
    (void)CompressorRegistry::global().create(
        sparseloco_config({"compressor.sparseloco.exchange=tree", "compressor.sparseloco.norm_clip=false"}));
  }, testing::ThrowsMessage<ConfigError>(testing::HasSubstr("set compressor.sparseloco.bins = 0")));
  EXPECT_THAT([] {
    (void)CompressorRegistry::global().create(
        sparseloco_config({"compressor.sparseloco.exchange=tree", "compressor.sparseloco.bins=0"}));
  }, testing::ThrowsMessage<ConfigError>(testing::HasSubstr("set compressor.sparseloco.norm_clip = false")));
}

}  // namespace
}  // namespace lowcomm
