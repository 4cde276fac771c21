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
  const auto rows = fixture().attr_int(group, "rows"), cols = fixture().attr_int(group, "cols");
  const auto topk = fixture().attr_int(group, "topk"), chunk = fixture().attr_int(group, "chunk");
  const std::vector<float> input = fixture().floats(group + "/input");
  const test::MergeTreeCase tree(fixture(), group);
  const std::vector<std::int64_t> shape{rows, cols};
  const auto n = static_cast<std::size_t>(rows * cols);
  const test::InProcessTree run(tree, UnitContext{.unit_id = 0, .name = "w", .shape = shape}, input,
                                [&] { return sparseloco_tree(topk, chunk); });
  EXPECT_EQ(run.sends, fixture().ints(group + "/sends"));
  // 12-bit indices, fp32 sums and uint16 counts per entry.
  const auto entries = fixture().ints(group + "/global_indices").size();
  EXPECT_EQ(run.merged.size(), 3 * ((entries + 1) / 2) + entries * (4 + 2));

  const std::vector<float> aggregate = fixture().floats(group + "/aggregate");
  const std::vector<float> residual = fixture().floats(group + "/residual");
  for (std::size_t r = 0; r < run.ranks.size(); ++r) {
    EXPECT_EQ(run.aggregates[r], aggregate) << "rank " << r;
    if (!run.units[r].present) continue;  // error feedback keeps an absent rank's whole input
    // What error feedback keeps: the input less the entries transmitted.
    const std::span<const float> mine = std::span(input).subspan(r * n, n);
    std::vector<float> kept(mine.begin(), mine.end()), unused(n);
    const Transmitted sent = run.ranks[r]->transmitted(run.units[r], mine, run.scratch[r], unused);
    ASSERT_EQ(sent.form(), Transmitted::Form::Entries);
    for (std::size_t e = 0; e < sent.indices().size(); ++e) {
      kept[static_cast<std::size_t>(sent.indices()[e])] -= sent.values()[e];
    }
    EXPECT_EQ(kept, std::vector<float>(residual.begin() + static_cast<std::ptrdiff_t>(r * n),
                                       residual.begin() + static_cast<std::ptrdiff_t>((r + 1) * n)))
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
