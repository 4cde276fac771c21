// The Communicator's pricing layer without MPI: each call priced as the network model prices the
// collective, for the rank asking, cached or not; a bad broadcast root refused.
#include <gtest/gtest.h>

#include <vector>

#include "lowcomm/comm/collective_pricing.hpp"
#include "lowcomm/error.hpp"

namespace lowcomm {
namespace {

constexpr int kRanks = 3;

// Ranks with links of their own, so that every rank's bytes and the slowest time differ.
NetworkModel uneven_network() {
  NetworkModel network(Link{.latency_s = 1e-3, .upload_bytes_per_s = 1e8, .download_bytes_per_s = 2e8});
  network.set_rank_link(1, Link{.latency_s = 5e-3, .upload_bytes_per_s = 1e6, .download_bytes_per_s = 1e7});
  return network;
}

void expect_rank_share(const RankCost& priced, const CollectiveCost& model, int rank) {
  EXPECT_EQ(priced.seconds, model.seconds);
  EXPECT_EQ(priced.bytes_sent, model.bytes_sent[static_cast<std::size_t>(rank)]);
  EXPECT_EQ(priced.bytes_received, model.bytes_received[static_cast<std::size_t>(rank)]);
}

TEST(CollectivePricing, EveryCallIsTheModelsCostForThisRankCachedOrNot) {
  const NetworkModel network = uneven_network();
  for (int rank = 0; rank < kRanks; ++rank) {
    CollectivePricing pricing(network, AllReduceAlgorithm::Rabenseifner, AllGatherAlgorithm::Bruck, rank, kRanks);
    for (int repeat = 0; repeat < 2; ++repeat) {  // the second time from the cache
      expect_rank_share(pricing.all_reduce(1000, 4),
                        network.all_reduce(AllReduceAlgorithm::Rabenseifner, kRanks, 1000, 4), rank);
      const std::vector<std::uint64_t> equal(kRanks, 4096);
      expect_rank_share(pricing.all_gather(4096), network.all_gather(AllGatherAlgorithm::Bruck, equal), rank);
      const std::vector<std::uint64_t> blocks{100, 0, 7000};
      expect_rank_share(pricing.all_gather_v(blocks), network.all_gather(AllGatherAlgorithm::Bruck, blocks), rank);
      expect_rank_share(pricing.broadcast(5000, 2), network.broadcast(kRanks, 2, 5000), rank);
      const std::vector<int> sends_to{1, 0, -1};
      const std::vector<std::uint64_t> each(kRanks, 300);
      expect_rank_share(pricing.pair_exchange(sends_to, 300), network.pair_exchange(sends_to, each), rank);
      expect_rank_share(pricing.all_to_all(64), network.all_to_all(kRanks, 64), rank);
      expect_rank_share(pricing.barrier(), network.barrier(kRanks), rank);
    }
  }
}

TEST(CollectivePricing, ManySizesOutgrowTheCacheAndStayRight) {
  const NetworkModel network = uneven_network();
  CollectivePricing pricing(network, AllReduceAlgorithm::Ring, AllGatherAlgorithm::Ring, 1, kRanks);
  for (std::uint64_t count = 1; count <= CollectivePricing::kCacheEntries + 10; ++count) {
    expect_rank_share(pricing.all_reduce(count, 2), network.all_reduce(AllReduceAlgorithm::Ring, kRanks, count, 2), 1);
  }
  expect_rank_share(pricing.all_reduce(1, 2), network.all_reduce(AllReduceAlgorithm::Ring, kRanks, 1, 2), 1);
}

TEST(CollectivePricing, ABroadcastRootOutsideTheRanksIsRefused) {
  const NetworkModel network = uneven_network();
  CollectivePricing pricing(network, AllReduceAlgorithm::Ring, AllGatherAlgorithm::Ring, 0, kRanks);
  EXPECT_THROW(pricing.broadcast(10, kRanks), CommError);
  EXPECT_THROW(pricing.broadcast(10, -1), CommError);
}

}  // namespace
}  // namespace lowcomm
