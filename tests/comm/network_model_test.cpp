// The network model against REFERENCE.md §6's closed forms, and its byte counts against what
// each algorithm must move (every rank receives every block it lacks exactly once...).
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "lowcomm/comm/network_model.hpp"
#include "lowcomm/comm/network_scenarios.hpp"
#include "lowcomm/error.hpp"

namespace lowcomm {
namespace {

constexpr double kAlpha = 2e-3;      // s
constexpr double kBeta = 125e6;      // bytes/s (1 Gbps)
const Link kUniform{.latency_s = kAlpha, .upload_bytes_per_s = kBeta, .download_bytes_per_s = kBeta};

double log2_ceil(int w) { return std::ceil(std::log2(static_cast<double>(w))); }

std::uint64_t sum(const std::vector<std::uint64_t>& v) {
  return std::accumulate(v.begin(), v.end(), std::uint64_t{0});
}

void expect_time(double actual, double expected) {
  EXPECT_NEAR(actual, expected, 1e-12 + 1e-12 * expected) << "expected " << expected;
}

class ClosedForms : public testing::TestWithParam<int> {};

TEST_P(ClosedForms, RingAllReduce) {
  const int w = GetParam();
  const NetworkModel model(kUniform);
  for (std::uint64_t count : {std::uint64_t(w), std::uint64_t(1000 * w), std::uint64_t(w) << 20}) {
    const double n = static_cast<double>(count * 4);
    const CollectiveCost cost = model.all_reduce(AllReduceAlgorithm::Ring, w, count, 4);
    expect_time(cost.seconds, 2.0 * (w - 1) * kAlpha + 2.0 * (w - 1) / w * n / kBeta);
    for (int r = 0; r < w; ++r) {
      EXPECT_EQ(cost.bytes_sent[r], 2 * (w - 1) * count * 4 / w);
      EXPECT_EQ(cost.bytes_received[r], 2 * (w - 1) * count * 4 / w);
    }
  }
}

TEST_P(ClosedForms, RabenseifnerAllReduce) {
  const int w = GetParam();
  const NetworkModel model(kUniform);
  int p = 1;
  while (p * 2 <= w) p *= 2;
  for (std::uint64_t count : {std::uint64_t(8), std::uint64_t(8000), std::uint64_t(1) << 20}) {
    const double n = static_cast<double>(count * 4);
    const CollectiveCost cost = model.all_reduce(AllReduceAlgorithm::Rabenseifner, w, count, 4);
    // Non-powers of two pay one extra full-vector exchange before and after (MPICH's fold).
    const double fold = p == w ? 0.0 : 2.0 * (kAlpha + n / kBeta);
    expect_time(cost.seconds, fold + 2.0 * std::log2(p) * kAlpha + 2.0 * (p - 1) / p * n / kBeta);
    EXPECT_EQ(sum(cost.bytes_sent), sum(cost.bytes_received));
    const std::uint64_t core = 2 * (p - 1) * count * 4;  // all p active ranks together
    EXPECT_EQ(sum(cost.bytes_sent), core + 2 * static_cast<std::uint64_t>(w - p) * count * 4);
  }
}

TEST_P(ClosedForms, RingAllGather) {
  const int w = GetParam();
  const NetworkModel model(kUniform);
  for (std::uint64_t m : {std::uint64_t(1), std::uint64_t(4096), std::uint64_t(3) << 20}) {
    const std::vector<std::uint64_t> blocks(static_cast<std::size_t>(w), m);
    const CollectiveCost cost = model.all_gather(AllGatherAlgorithm::Ring, blocks);
    const double total = static_cast<double>(m) * w;
    expect_time(cost.seconds, (w - 1) * kAlpha + (w - 1.0) / w * total / kBeta);
    for (int r = 0; r < w; ++r) {
      EXPECT_EQ(cost.bytes_sent[r], (w - 1) * m);
      EXPECT_EQ(cost.bytes_received[r], (w - 1) * m);
    }
  }
}

TEST_P(ClosedForms, BruckAndRecursiveDoublingAllGather) {
  const int w = GetParam();
  const NetworkModel model(kUniform);
  for (std::uint64_t m : {std::uint64_t(1), std::uint64_t(4096), std::uint64_t(3) << 20}) {
    const std::vector<std::uint64_t> blocks(static_cast<std::size_t>(w), m);
    const double total = static_cast<double>(m) * w;
    const CollectiveCost bruck = model.all_gather(AllGatherAlgorithm::Bruck, blocks);
    expect_time(bruck.seconds, log2_ceil(w) * kAlpha + (w - 1.0) / w * total / kBeta);
    for (int r = 0; r < w; ++r) EXPECT_EQ(bruck.bytes_received[r], (w - 1) * m);
    if (is_power_of_two(w)) {
      const CollectiveCost rd = model.all_gather(AllGatherAlgorithm::RecursiveDoubling, blocks);
      expect_time(rd.seconds, std::log2(w) * kAlpha + (w - 1.0) / w * total / kBeta);
      for (int r = 0; r < w; ++r) EXPECT_EQ(rd.bytes_received[r], (w - 1) * m);
    } else {
      EXPECT_THROW(model.all_gather(AllGatherAlgorithm::RecursiveDoubling, blocks), CommError);
    }
  }
}

TEST_P(ClosedForms, BinomialBroadcastAndBarrier) {
  const int w = GetParam();
  const NetworkModel model(kUniform);
  for (std::uint64_t n : {std::uint64_t(0), std::uint64_t(1000), std::uint64_t(1) << 24}) {
    for (int root = 0; root < w; ++root) {
      const CollectiveCost cost = model.broadcast(w, root, n);
      expect_time(cost.seconds, log2_ceil(w) * (kAlpha + static_cast<double>(n) / kBeta));
      for (int r = 0; r < w; ++r) EXPECT_EQ(cost.bytes_received[r], r == root ? 0 : n);
      EXPECT_EQ(sum(cost.bytes_sent), (w - 1) * n);
    }
  }
  const CollectiveCost barrier = model.barrier(w);
  expect_time(barrier.seconds, log2_ceil(w) * kAlpha);
  EXPECT_EQ(sum(barrier.bytes_sent), 0u);
}

INSTANTIATE_TEST_SUITE_P(WorldSizes, ClosedForms, testing::Values(2, 3, 4, 8),
                         [](const auto& info) { return "W" + std::to_string(info.param); });

// Uneven sizes: chunks differ by one element, but every byte still moves exactly as often as the
// algorithm says: each of the W chunks crosses W-1 links in each of the two phases.
TEST(RingAllReduce, UnevenCountsMoveEveryChunkOncePerLinkAndPhase) {
  const NetworkModel model(kUniform);
  for (int w : {3, 5, 7}) {
    for (std::uint64_t count : {1ull, 2ull, 10ull, 1001ull}) {
      const CollectiveCost cost = model.all_reduce(AllReduceAlgorithm::Ring, w, count, 8);
      EXPECT_EQ(sum(cost.bytes_sent), 2 * (w - 1) * count * 8) << "W=" << w << " count=" << count;
      EXPECT_EQ(sum(cost.bytes_received), sum(cost.bytes_sent));
      // Rank r never sends the chunk it ends the reduce-scatter (r+1) or all-gather (r+2) with.
      for (int r = 0; r < w; ++r) {
        auto chunk = [&](int c) { return (count / w + (std::uint64_t(c % w) < count % w ? 1 : 0)) * 8; };
        EXPECT_EQ(cost.bytes_sent[r], 2 * count * 8 - chunk(r + 1) - chunk(r + 2));
      }
    }
  }
}

TEST(AllGather, VariableBlocksReachEveryRankExactlyOnce) {
  const NetworkModel model(kUniform);
  for (int w : {2, 3, 4, 5, 8}) {
    std::vector<std::uint64_t> blocks;
    for (int r = 0; r < w; ++r) blocks.push_back(17 * r * r + 3);
    const std::uint64_t total = sum(blocks);
    for (auto algorithm : {AllGatherAlgorithm::Ring, AllGatherAlgorithm::Bruck,
                           AllGatherAlgorithm::RecursiveDoubling}) {
      if (algorithm == AllGatherAlgorithm::RecursiveDoubling && !is_power_of_two(w)) continue;
      const CollectiveCost cost = model.all_gather(algorithm, blocks);
      for (int r = 0; r < w; ++r) {
        EXPECT_EQ(cost.bytes_received[r], total - blocks[r]) << to_string(algorithm) << " W=" << w;
      }
      EXPECT_EQ(sum(cost.bytes_sent), sum(cost.bytes_received));
    }
    // In the ring, rank r forwards every block but the one of its successor.
    const CollectiveCost ring = model.all_gather(AllGatherAlgorithm::Ring, blocks);
    for (int r = 0; r < w; ++r) EXPECT_EQ(ring.bytes_sent[r], total - blocks[(r + 1) % w]);
  }
}

TEST(NetworkModel, AsymmetricLinkIsBoundByUpload) {
  const Link consumer = network_scenario("consumer").link;
  EXPECT_DOUBLE_EQ(consumer.upload_bytes_per_s, 10e6 / 8);
  EXPECT_DOUBLE_EQ(consumer.download_bytes_per_s, 100e6 / 8);
  EXPECT_DOUBLE_EQ(consumer.latency_s, 0.030);
  const NetworkModel model(consumer);
  const int w = 4;
  const std::uint64_t count = 1 << 20;
  const CollectiveCost cost = model.all_reduce(AllReduceAlgorithm::Ring, w, count, 4);
  const double chunk = count * 4.0 / w;
  expect_time(cost.seconds, 2.0 * (w - 1) * (0.030 + chunk / consumer.upload_bytes_per_s));
}

TEST(NetworkModel, DownloadBoundsTheReceiverOfAFanIn) {
  // A broadcast root with a fast upload sending to a rank with a slow download.
  NetworkModel model(Link{.latency_s = 0, .upload_bytes_per_s = 1e9, .download_bytes_per_s = 1e9});
  model.set_rank_link(1, Link{.latency_s = 0, .upload_bytes_per_s = 1e9, .download_bytes_per_s = 1e3});
  const CollectiveCost cost = model.broadcast(2, 0, 1000);
  expect_time(cost.seconds, 1.0);
}

TEST(NetworkModel, ASlowRankBoundsEveryRingRound) {
  const int w = 4;
  const std::uint64_t count = 4000;
  NetworkModel model(kUniform);
  const double fast = model.all_reduce(AllReduceAlgorithm::Ring, w, count, 4).seconds;
  const Link slow{.latency_s = 0.1, .upload_bytes_per_s = kBeta / 10, .download_bytes_per_s = kBeta};
  model.set_rank_link(2, slow);
  const CollectiveCost cost = model.all_reduce(AllReduceAlgorithm::Ring, w, count, 4);
  // Rank 2 sends in every one of the 2(W-1) rounds, and its latency applies to each of them.
  expect_time(cost.seconds, 2.0 * (w - 1) * (0.1 + count * 4.0 / w / (kBeta / 10)));
  EXPECT_GT(cost.seconds, fast);
  EXPECT_EQ(model.link(2), slow);
  EXPECT_EQ(model.link(1), kUniform);
}

// A gossip round: pairs (0,3) and (1,2), rank 4 out. One round: the largest latency plus the
// largest transfer time, where a pair link bounds its own message and each rank's upload its.
TEST(NetworkModel, PairExchangeIsOneRoundOfThePairsMessages) {
  NetworkModel model(Link{.latency_s = 0.010, .upload_bytes_per_s = 1e6, .download_bytes_per_s = 1e7});
  model.set_pair_link(0, 3, PairLink{.latency_s = 0.050, .bytes_per_s = 1e5});
  const std::vector<int> partners{3, 2, 1, 0, -1};
  const std::vector<std::uint64_t> bytes(5, 2000);
  const CollectiveCost cost = model.pair_exchange(partners, bytes);
  // 0 -> 3 on its pair link: 50 ms + 2000 B / 1e5 B/s = 20 ms; the others: 10 ms + 2000 / 1e6 = 2 ms.
  expect_time(cost.seconds, 0.050 + 0.020);
  for (int r : {0, 1, 2, 3}) {
    EXPECT_EQ(cost.bytes_sent[r], 2000u) << r;
    EXPECT_EQ(cost.bytes_received[r], 2000u) << r;
  }
  EXPECT_EQ(cost.bytes_sent[4], 0u);
  EXPECT_EQ(cost.bytes_received[4], 0u);
  // Without the pair link, each rank's own: 10 ms + 2000 B at its 1e6 B/s upload.
  const NetworkModel plain(Link{.latency_s = 0.010, .upload_bytes_per_s = 1e6, .download_bytes_per_s = 1e7});
  expect_time(plain.pair_exchange(partners, bytes).seconds, 0.010 + 0.002);
  // Nobody paired: nothing moves, nothing is charged.
  EXPECT_EQ(plain.pair_exchange(std::vector<int>(5, -1), bytes).seconds, 0.0);
}

// The pairwise all-to-all: W - 1 rounds of one block per rank, each round as long as its slowest
// message; here rank 2's slow upload bounds every round (it sends in each).
TEST(NetworkModel, AllToAllIsWMinusOneRoundsOfOneBlock) {
  NetworkModel model(Link{.latency_s = 0.010, .upload_bytes_per_s = 1e6, .download_bytes_per_s = 1e7});
  const CollectiveCost cost = model.all_to_all(4, 1000);
  expect_time(cost.seconds, 3 * (0.010 + 1000 / 1e6));
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(cost.bytes_sent[r], 3000u) << r;
    EXPECT_EQ(cost.bytes_received[r], 3000u) << r;
  }
  model.set_rank_link(2, Link{.latency_s = 0.010, .upload_bytes_per_s = 1e5, .download_bytes_per_s = 1e7});
  expect_time(model.all_to_all(4, 1000).seconds, 3 * (0.010 + 1000 / 1e5));
  EXPECT_EQ(model.all_to_all(1, 1000).seconds, 0.0);  // alone: nothing moves
}

TEST(NetworkModel, IdealNetworkCostsNothingButCountsBytes) {
  const NetworkModel ideal;
  const CollectiveCost cost = ideal.all_reduce(AllReduceAlgorithm::Ring, 3, 300, 4);
  EXPECT_EQ(cost.seconds, 0.0);
  EXPECT_EQ(cost.bytes_sent[0], 1600u);  // 2 (W-1)/W of 1200 bytes
}

TEST(NetworkModel, SingleRankMovesNothing) {
  const NetworkModel model(kUniform);
  const CollectiveCost cost = model.all_reduce(AllReduceAlgorithm::Rabenseifner, 1, 1000, 4);
  EXPECT_EQ(cost.seconds, 0.0);
  EXPECT_EQ(cost.bytes_sent, std::vector<std::uint64_t>{0});
  EXPECT_EQ(model.all_gather(AllGatherAlgorithm::Ring, std::vector<std::uint64_t>{5}).seconds, 0.0);
  EXPECT_EQ(model.broadcast(1, 0, 100).seconds, 0.0);
}

TEST(NetworkModel, RejectsInvalidLinksAndRoots) {
  NetworkModel model;
  EXPECT_THROW(model.set_rank_link(0, Link{.latency_s = -1}), ConfigError);
  EXPECT_THROW(model.set_rank_link(0, Link{.latency_s = 0, .upload_bytes_per_s = 0}), ConfigError);
  EXPECT_THROW(model.broadcast(3, 3, 10), CommError);
}

TEST(NetworkScenarios, KnownNamesAndHelpfulErrorForOthers) {
  for (const char* name : {"ideal", "consumer", "1gbps", "10gbps", "100gbps"}) {
    EXPECT_EQ(network_scenario(name).name, name);
  }
  EXPECT_DOUBLE_EQ(network_scenario("1gbps").link.upload_bytes_per_s, 125e6);
  EXPECT_DOUBLE_EQ(network_scenario("1gbps").link.latency_s, 0.010);
  try {
    network_scenario("dialup");
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("dialup"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("consumer"), std::string::npos);
  }
}

}  // namespace
}  // namespace lowcomm
