// DeMo over gTop-k's tree (compressor.dct_topk.exchange = "tree") against tests/fixtures/
// demo_tree.h5, an independent numpy simulation (make_demo_tree_fixture.py): per-block DCT top-k,
// merges that add values and counts and keep the k largest |sum| per block, the butterfly and the
// regional tree with and without absent ranks, the aggregate (inverse DCT of sum / count) and what
// each rank transmits (its own entries among the final k). W = 1 to 7 simulated ranks in one
// process, each rank's encode, the merge rounds of merge_schedule.hpp run by hand with the
// compressor's merge, each rank's decode. The indices and counts are exact; the sums, aggregate and
// transmitted parts agree to float32 rounding (the fixture's DCT is float64, lowcomm's float32).
// Also: a malformed payload refused, and the 1-bit wire refused.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cmath>
#include <cstring>

#include "fixtures/fixtures.hpp"
#include "lowcomm/compress/registry.hpp"
#include "lowcomm/error.hpp"
#include "merge_tree_case.hpp"

namespace lowcomm {
namespace {

const test::FixtureFile& fixture() {
  static const test::FixtureFile file(LOWCOMM_DEMO_TREE_FIXTURE);
  return file;
}

std::unique_ptr<Compressor> demo_tree(std::int64_t k, std::int64_t chunk) {
  ConfigSchema schema;
  CompressorRegistry::global().add_config_keys(schema);
  const Config config = Config::defaults(
      schema, std::vector<std::string>{"compressor.name=dct_topk", fmt::format("compressor.dct_topk.topk={}", k),
                                       fmt::format("compressor.dct_topk.chunk={}", chunk),
                                       "compressor.dct_topk.exchange=tree"});
  return CompressorRegistry::global().create(config);
}

void expect_close(std::span<const float> got, std::span<const float> want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], 2e-5 * (1.0 + std::abs(want[i]))) << what << " at " << i;
  }
}

class DemoTreeFixture : public testing::TestWithParam<std::string> {};

TEST_P(DemoTreeFixture, EqualsTheSimulation) {
  const std::string group = GetParam();
  const auto rows = fixture().attr_int(group, "rows"), cols = fixture().attr_int(group, "cols");
  const auto k = fixture().attr_int(group, "k"), chunk = fixture().attr_int(group, "chunk");
  const std::vector<float> input = fixture().floats(group + "/input");
  const test::MergeTreeCase tree(fixture(), group);
  const std::vector<std::int64_t> shape{rows, cols};
  const auto n = static_cast<std::size_t>(rows * cols);
  test::InProcessTree run(tree, UnitContext{.unit_id = 0, .name = "w", .shape = shape}, input,
                          [&] { return demo_tree(k, chunk); });
  EXPECT_EQ(run.sends, fixture().ints(group + "/sends"));

  // The merged payload on the reference wire: int64 indices, fp32 sums, uint16 counts.
  const std::vector<std::int64_t> want_indices = fixture().ints(group + "/global_indices");
  const std::vector<std::int64_t> want_counts = fixture().ints(group + "/global_counts");
  const std::size_t entries = want_indices.size();
  ASSERT_EQ(run.merged.size(), entries * (8 + 4 + 2));
  std::vector<std::int64_t> indices(entries), counts(entries);
  std::vector<float> sums(entries);
  for (std::size_t e = 0; e < entries; ++e) {
    std::uint16_t count = 0;
    std::memcpy(&indices[e], run.merged.data() + 8 * e, 8);
    std::memcpy(&sums[e], run.merged.data() + 8 * entries + 4 * e, 4);
    std::memcpy(&count, run.merged.data() + 12 * entries + 2 * e, 2);
    counts[e] = count;
  }
  EXPECT_EQ(indices, want_indices);
  EXPECT_EQ(counts, want_counts);
  expect_close(sums, fixture().floats(group + "/global_values"), group + " sums");

  const std::vector<float> aggregate = fixture().floats(group + "/aggregate");
  const std::vector<float> transmitted = fixture().floats(group + "/transmitted");
  for (std::size_t r = 0; r < run.ranks.size(); ++r) {
    expect_close(run.aggregates[r], aggregate, fmt::format("{}, rank {}'s aggregate", group, r));
    if (!run.units[r].present) continue;  // error feedback keeps an absent rank's whole input
    std::vector<float> sent(n, -1.0f);
    const std::span<const float> mine = std::span(input).subspan(r * n, n);
    EXPECT_EQ(run.ranks[r]->transmitted(run.units[r], mine, run.scratch[r], sent).form(), Transmitted::Form::Dense);
    expect_close(sent, std::span(transmitted).subspan(r * n, n), fmt::format("{}, rank {}'s transmitted", group, r));
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, DemoTreeFixture,
                         testing::ValuesIn(fixture().top_level()),
                         [](const testing::TestParamInfo<std::string>& info) { return info.param.substr(1); });

// A partner's payload of the wrong size, an index out of its block, a count of no rank or of more
// ranks than take part, or a repeated index, is refused by name; the 1-bit wire cannot sum.
TEST(DemoTreeMerge, RefusesAMalformedPayloadAndTheOneBitWire) {
  const auto compressor = demo_tree(2, 4);
  const std::vector<std::int64_t> shape{4, 4};  // one 4 x 4 block, k = 2: 16 index + 8 sum + 4 count bytes
  const UnitContext unit{.unit_id = 0, .name = "w", .shape = shape, .world_size = 2};
  UnitScratch scratch;
  std::vector<float> input(16, 0.0f);
  input[0] = 3.0f;
  input[5] = -1.0f;
  const std::vector<std::byte> mine = compressor->encode(unit, input, scratch).bytes;
  ASSERT_EQ(mine.size(), 28u);
  const auto refused = [&](std::vector<std::byte> theirs, const std::string& why) {
    EXPECT_THAT([&] { (void)compressor->merge(unit, mine, theirs); },
                testing::ThrowsMessage<Error>(testing::HasSubstr(why)));
  };
  refused(std::vector<std::byte>(mine.begin(), mine.begin() + 27), "partner's payload for 'w' holds 27 bytes");
  std::vector<std::byte> far = mine;
  const std::int64_t outside = 16;
  std::memcpy(far.data() + 8, &outside, 8);
  refused(far, "index");
  std::vector<std::byte> nobody = mine;
  std::memset(nobody.data() + 24, 0, 2);
  refused(nobody, "counts 0 ranks");
  std::vector<std::byte> crowd = mine;
  const std::uint16_t three = 3;
  std::memcpy(crowd.data() + 24, &three, 2);
  refused(crowd, "counts 3 ranks");
  std::vector<std::byte> repeated = mine;
  std::memcpy(repeated.data() + 8, repeated.data(), 8);
  refused(repeated, "repeats or misorders index");

  ConfigSchema schema;
  CompressorRegistry::global().add_config_keys(schema);
  const Config one_bit = Config::defaults(
      schema, std::vector<std::string>{"compressor.name=dct_topk", "compressor.dct_topk.exchange=tree",
                                       "compressor.dct_topk.wire=compact_1bit"});
  EXPECT_THAT([&] { (void)CompressorRegistry::global().create(one_bit); },
              testing::ThrowsMessage<ConfigError>(testing::HasSubstr("needs fp32 values")));
}

}  // namespace
}  // namespace lowcomm
