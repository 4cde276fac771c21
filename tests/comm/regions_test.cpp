// Ranks in cloud regions: the cited round-trip table, pair links between regions (hand-computed
// ring costs), the repeat of a short placement list, and the worldwide scenario.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "lowcomm/comm/network_scenarios.hpp"
#include "lowcomm/comm/regions.hpp"
#include "lowcomm/error.hpp"

namespace lowcomm {
namespace {

TEST(Regions, TheTableIsSymmetricAndHoldsThePublishedValues) {
  for (const std::string_view a : region_names()) {
    EXPECT_EQ(region_rtt_ms(a, a), 0.0);
    for (const std::string_view b : region_names()) EXPECT_EQ(region_rtt_ms(a, b), region_rtt_ms(b, a));
  }
  EXPECT_DOUBLE_EQ(region_rtt_ms("virginia", "tokyo"), 145.3);
  EXPECT_DOUBLE_EQ(region_rtt_ms("tokyo", "singapore"), 73.8);
  EXPECT_THAT([] { region_rtt_ms("virginia", "mars"); },
              testing::ThrowsMessage<ConfigError>(testing::HasSubstr("unknown region 'mars'")));
}

// W = 4, "virginia,tokyo": ranks 0 and 2 in Virginia, 1 and 3 in Tokyo. Every ring all-gather
// message crosses the Pacific: each of the 3 rounds pays 1 ms + 145.3 / 2 ms, plus its transfer.
TEST(Regions, PairsInTwoRegionsPayHalfTheRoundTripMore) {
  const Link access{.latency_s = 1e-3, .upload_bytes_per_s = 1e9, .download_bytes_per_s = 1e9};
  NetworkModel network(access);
  place_in_regions(network, 4, parse_region_list(" virginia , tokyo "));
  EXPECT_EQ(network.pair_links().size(), 8u);  // the 4 · 2 ordered cross-region pairs
  EXPECT_FALSE(network.pair_links().contains({0, 2}));
  EXPECT_NEAR(network.pair_links().at({3, 0}).latency_s, 1e-3 + 0.07265, 1e-15);
  const std::vector<std::uint64_t> blocks(4, 1'000'000);
  const double round = 1e-3 + 0.07265 + 1e6 / 1e9;
  EXPECT_NEAR(network.all_gather(AllGatherAlgorithm::Ring, blocks).seconds, 3 * round, 1e-12);
  // One region for all: the ranks' own links alone.
  NetworkModel local(access);
  place_in_regions(local, 4, parse_region_list("frankfurt"));
  EXPECT_TRUE(local.pair_links().empty());
  EXPECT_THROW(place_in_regions(local, 4, parse_region_list("")), ConfigError);
}

TEST(Regions, TheWorldwideScenarioPlacesRanksOverSixRegions) {
  const NetworkScenario& worldwide = network_scenario("worldwide");
  const std::vector<std::string> regions = parse_region_list(worldwide.regions);
  ASSERT_EQ(regions.size(), 6u);
  NetworkModel network(worldwide.link);
  place_in_regions(network, 8, regions);
  // Ranks 0 and 6 share Virginia; ranks 0 and 5 are Virginia and São Paulo.
  EXPECT_FALSE(network.pair_links().contains({0, 6}));
  EXPECT_NEAR(network.pair_links().at({0, 5}).latency_s, 0.5e-3 + 0.11950 / 2, 1e-15);
}

}  // namespace
}  // namespace lowcomm
