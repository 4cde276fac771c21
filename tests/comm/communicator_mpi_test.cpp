// Communicator on real MPI ranks: every collective checked on data, byte accounting against the
// network model, the simulated clock, and throttling. Runs at 1, 2, 3 and 4 ranks.
#include <gtest/gtest.h>

#include <chrono>
#include <limits>
#include <numeric>
#include <thread>

#include "lowcomm/comm/communicator.hpp"
#include "lowcomm/comm/network_scenarios.hpp"

namespace lowcomm {
namespace {

int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
int world_size() {
  int s = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

TEST(Communicator, AllReduceSumAndAverageOnData) {
  Communicator comm(MPI_COMM_WORLD);
  const int w = comm.size(), r = comm.rank();
  ASSERT_EQ(r, world_rank());
  for (std::size_t n : {std::size_t(1), std::size_t(7), std::size_t(1000)}) {
    std::vector<double> d(n);
    std::vector<float> f(n);
    std::vector<std::int64_t> i(n);
    for (std::size_t k = 0; k < n; ++k) {
      d[k] = (r + 1) * 0.5 + static_cast<double>(k);
      f[k] = static_cast<float>(r * 2 + k % 5);
      i[k] = (std::int64_t(1) << 40) * r + static_cast<std::int64_t>(k);
    }
    comm.all_reduce(std::span<double>(d), ReduceOp::Sum);
    comm.all_reduce(std::span<float>(f), ReduceOp::Average);
    comm.all_reduce(std::span<std::int64_t>(i), ReduceOp::Sum);
    const double rank_sum = w * (w - 1) / 2.0;
    for (std::size_t k = 0; k < n; ++k) {
      EXPECT_DOUBLE_EQ(d[k], 0.5 * (rank_sum + w) + w * static_cast<double>(k));
      EXPECT_FLOAT_EQ(f[k], static_cast<float>((2 * rank_sum + w * double(k % 5)) / w));
      EXPECT_EQ(i[k], (std::int64_t(1) << 40) * static_cast<std::int64_t>(rank_sum) +
                          w * static_cast<std::int64_t>(k));
    }
  }
  std::vector<std::int32_t> ints(3, 1);
  EXPECT_THROW(comm.all_reduce(std::span<std::int32_t>(ints), ReduceOp::Average), CommError);
}

TEST(Communicator, AllGatherEqualAndVariableSizes) {
  Communicator comm(MPI_COMM_WORLD);
  const int w = comm.size(), r = comm.rank();
  struct Pair {
    std::uint32_t index;
    float value;
  };
  const std::vector<Pair> mine{{std::uint32_t(r), r * 1.5f}, {std::uint32_t(10 + r), -r * 1.0f}};
  std::vector<Pair> all(2 * static_cast<std::size_t>(w));
  comm.all_gather(std::span<const Pair>(mine), std::span<Pair>(all));
  for (int q = 0; q < w; ++q) {
    EXPECT_EQ(all[2 * q].index, std::uint32_t(q));
    EXPECT_EQ(all[2 * q].value, q * 1.5f);
    EXPECT_EQ(all[2 * q + 1].index, std::uint32_t(10 + q));
  }
  std::vector<Pair> wrong(3);
  EXPECT_THROW(comm.all_gather(std::span<const Pair>(mine), std::span<Pair>(wrong)), CommError);

  // Rank q contributes q + 1 values equal to 100 q + k (rank 0's single value included).
  std::vector<int> block(static_cast<std::size_t>(r) + 1);
  std::iota(block.begin(), block.end(), 100 * r);
  std::vector<std::size_t> counts;
  const std::uint64_t calls_before = comm.totals(CollectiveKind::AllGather).calls;
  const std::vector<int> gathered = comm.all_gather_v(std::span<const int>(block), &counts);
  EXPECT_EQ(comm.totals(CollectiveKind::AllGather).calls, calls_before + 2);  // counts, then data
  ASSERT_EQ(counts.size(), static_cast<std::size_t>(w));
  std::size_t at = 0;
  for (int q = 0; q < w; ++q) {
    EXPECT_EQ(counts[q], static_cast<std::size_t>(q) + 1);
    for (int k = 0; k <= q; ++k) EXPECT_EQ(gathered[at++], 100 * q + k);
  }
  EXPECT_EQ(at, gathered.size());

  // Known counts: no exchange of sizes.
  std::vector<int> out(gathered.size());
  comm.all_gather_v(std::span<const int>(block), std::span<const std::size_t>(counts), std::span<int>(out));
  EXPECT_EQ(out, gathered);
  EXPECT_EQ(comm.totals(CollectiveKind::AllGather).calls, calls_before + 3);
}

TEST(Communicator, BroadcastFromEveryRootAndBarrier) {
  Communicator comm(MPI_COMM_WORLD);
  for (int root = 0; root < comm.size(); ++root) {
    std::vector<double> data(5, comm.rank() == root ? root + 0.25 : -1.0);
    comm.broadcast(std::span<double>(data), root);
    for (double x : data) EXPECT_EQ(x, root + 0.25);
  }
  comm.barrier();
  EXPECT_EQ(comm.totals(CollectiveKind::Barrier).calls, 1u);
  std::vector<double> data(1);
  EXPECT_THROW(comm.broadcast(std::span<double>(data), comm.size()), CommError);
}

// Gossip's primitive: rank r pairs with r ^ 1 (the last rank of an odd world sits out, as does a
// lone rank). Data from the partner, its bytes counted for the pair only, the modelled time the
// network model's, and a partners list that is not a matching refused on every rank.
TEST(Communicator, ExchangePairsSwapsWithThePartnerOnly) {
  NetworkModel network(network_scenario("consumer").link);
  Communicator comm(MPI_COMM_WORLD, {.network = network, .mode = NetworkMode::Simulate, .keep_records = true});
  const int w = comm.size(), r = comm.rank();
  std::vector<int> partners(static_cast<std::size_t>(w));
  for (int q = 0; q < w; ++q) partners[static_cast<std::size_t>(q)] = (q ^ 1) < w ? (q ^ 1) : -1;
  const std::vector<double> mine{r + 0.5, -r * 2.0, 7.0};
  std::vector<double> theirs(3, -1.0);
  comm.exchange_pairs(std::span<const int>(partners), std::span<const double>(mine), std::span<double>(theirs));
  const int p = partners[static_cast<std::size_t>(r)];
  if (p >= 0) {
    EXPECT_EQ(theirs, (std::vector<double>{p + 0.5, -p * 2.0, 7.0}));
  } else {
    EXPECT_EQ(theirs, std::vector<double>(3, -1.0));  // sat the round out: untouched
  }
  const CollectiveCost expected = network.pair_exchange(partners, std::vector<std::uint64_t>(w, 3 * sizeof(double)));
  ASSERT_EQ(comm.records().size(), 1u);
  const CollectiveRecord& record = comm.records()[0];
  EXPECT_EQ(record.kind, CollectiveKind::PairExchange);
  EXPECT_EQ(record.bytes_sent, p >= 0 ? 3 * sizeof(double) : 0u);
  EXPECT_EQ(record.bytes_received, p >= 0 ? 3 * sizeof(double) : 0u);
  EXPECT_DOUBLE_EQ(record.modelled_s, expected.seconds);
  EXPECT_EQ(comm.totals(CollectiveKind::PairExchange).calls, 1u);
  if (w >= 2) EXPECT_GT(expected.seconds, 0.030);  // a consumer link's latency, and more

  std::vector<int> not_a_matching(static_cast<std::size_t>(w), 0);  // everyone names rank 0
  EXPECT_THROW(comm.exchange_pairs(std::span<const int>(not_a_matching), std::span<const double>(mine),
                                   std::span<double>(theirs)),
               CommError);
  EXPECT_THROW(comm.exchange_pairs(std::span<const int>(partners).first(static_cast<std::size_t>(w) - 1),
                                   std::span<const double>(mine), std::span<double>(theirs)),
               CommError);
}

// One-way messages (a merge tree's reduce and broadcast): along the chain r -> r + 1 every rank but
// the last sends and every rank but the first receives; bytes are counted where they travel, the
// modelled time is the round's, and two senders to one rank or a rank sending to itself are refused.
TEST(Communicator, SendPairsMovesOneWayAlongTheChain) {
  NetworkModel network(network_scenario("consumer").link);
  Communicator comm(MPI_COMM_WORLD, {.network = network, .mode = NetworkMode::Simulate, .keep_records = true});
  const int w = comm.size(), r = comm.rank();
  std::vector<int> sends_to(static_cast<std::size_t>(w));
  for (int q = 0; q < w; ++q) sends_to[static_cast<std::size_t>(q)] = q + 1 < w ? q + 1 : -1;
  const std::vector<float> mine{r + 0.25f, -3.0f * r};
  std::vector<float> theirs(2, -1.0f);
  comm.send_pairs(std::span<const int>(sends_to), std::span<const float>(mine), std::span<float>(theirs));
  EXPECT_EQ(theirs, r > 0 ? (std::vector<float>{r - 1 + 0.25f, -3.0f * (r - 1)}) : std::vector<float>(2, -1.0f));
  const CollectiveCost expected = network.pair_exchange(sends_to, std::vector<std::uint64_t>(w, 2 * sizeof(float)));
  ASSERT_EQ(comm.records().size(), 1u);
  const CollectiveRecord& record = comm.records()[0];
  EXPECT_EQ(record.kind, CollectiveKind::PairExchange);
  EXPECT_EQ(record.bytes_sent, r + 1 < w ? 2 * sizeof(float) : 0u);
  EXPECT_EQ(record.bytes_received, r > 0 ? 2 * sizeof(float) : 0u);
  EXPECT_DOUBLE_EQ(record.modelled_s, expected.seconds);

  std::vector<int> crowded(static_cast<std::size_t>(w), -1);
  if (w >= 3) {
    crowded[1] = 0;
    crowded[2] = 0;  // ranks 1 and 2 both send to rank 0
    EXPECT_THROW(comm.send_pairs(std::span<const int>(crowded), std::span<const float>(mine), std::span<float>(theirs)),
                 CommError);
  }
  std::vector<int> itself(static_cast<std::size_t>(w), -1);
  itself[0] = 0;
  EXPECT_THROW(comm.send_pairs(std::span<const int>(itself), std::span<const float>(mine), std::span<float>(theirs)),
               CommError);
}

// 1-bit Adam's first phase: block j of every rank's input arrives at rank j, in rank order; the
// payload is the W - 1 blocks this rank hands on, the modelled time the pairwise exchange's, and
// sizes that do not divide among the ranks are refused.
TEST(Communicator, AllToAllDealsEachRankItsBlocks) {
  NetworkModel network(network_scenario("consumer").link);
  Communicator comm(MPI_COMM_WORLD, {.network = network, .mode = NetworkMode::Simulate, .keep_records = true});
  const int w = comm.size(), r = comm.rank();
  const std::size_t block = 3;
  std::vector<std::int32_t> mine, theirs(block * static_cast<std::size_t>(w), -1);
  for (int j = 0; j < w; ++j) {
    for (std::size_t i = 0; i < block; ++i) mine.push_back(static_cast<std::int32_t>(1000 * r + 10 * j + i));
  }
  comm.all_to_all(std::span<const std::int32_t>(mine), std::span<std::int32_t>(theirs));
  for (int j = 0; j < w; ++j) {
    for (std::size_t i = 0; i < block; ++i) {
      EXPECT_EQ(theirs[static_cast<std::size_t>(j) * block + i], static_cast<std::int32_t>(1000 * j + 10 * r + i))
          << "block from rank " << j;
    }
  }
  ASSERT_EQ(comm.records().size(), 1u);
  const CollectiveRecord& record = comm.records()[0];
  const std::uint64_t block_bytes = block * sizeof(std::int32_t);
  EXPECT_EQ(record.kind, CollectiveKind::AllToAll);
  EXPECT_EQ(record.payload_bytes, (static_cast<std::uint64_t>(w) - 1) * block_bytes);
  EXPECT_EQ(record.bytes_sent, (static_cast<std::uint64_t>(w) - 1) * block_bytes);
  EXPECT_EQ(record.bytes_received, (static_cast<std::uint64_t>(w) - 1) * block_bytes);
  EXPECT_DOUBLE_EQ(record.modelled_s, network.all_to_all(w, block_bytes).seconds);
  const std::vector<std::int32_t> odd(block * static_cast<std::size_t>(w) + 1);
  std::vector<std::int32_t> out(odd.size());
  if (w > 1) {
    EXPECT_THROW(comm.all_to_all(std::span<const std::int32_t>(odd), std::span<std::int32_t>(out)), CommError);
  }
  EXPECT_THROW(comm.all_to_all(std::span<const std::int32_t>(mine), std::span<std::int32_t>(out)), CommError);
}

TEST(Communicator, BytesAndModelledTimeAreTheNetworkModelsForThisRank) {
  const NetworkModel network(network_scenario("consumer").link);
  for (auto algorithm : {AllReduceAlgorithm::Ring, AllReduceAlgorithm::Rabenseifner}) {
    Communicator comm(MPI_COMM_WORLD, {.network = network,
                                       .mode = NetworkMode::Simulate,
                                       .all_reduce_algorithm = algorithm,
                                       .all_gather_algorithm = AllGatherAlgorithm::Bruck,
                                       .keep_records = true});
    const int w = comm.size(), r = comm.rank();
    std::vector<float> v(1001, 1.0f);
    comm.all_reduce(std::span<float>(v), ReduceOp::Sum);
    std::vector<double> block(7 + r), all;
    all = comm.all_gather_v(std::span<const double>(block));
    comm.broadcast(std::span<float>(v), w - 1);

    std::vector<std::uint64_t> sizes(w);
    for (int q = 0; q < w; ++q) sizes[q] = (7 + q) * sizeof(double);
    const std::vector<CollectiveCost> expected{
        network.all_reduce(algorithm, w, 1001, 4),
        network.all_gather(AllGatherAlgorithm::Bruck, std::vector<std::uint64_t>(w, 8)),
        network.all_gather(AllGatherAlgorithm::Bruck, sizes),
        network.broadcast(w, w - 1, 1001 * 4)};
    const auto records = comm.records();
    ASSERT_EQ(records.size(), expected.size());
    CommCounters sum;
    for (std::size_t k = 0; k < records.size(); ++k) {
      EXPECT_EQ(records[k].bytes_sent, expected[k].bytes_sent[r]) << k;
      EXPECT_EQ(records[k].bytes_received, expected[k].bytes_received[r]) << k;
      EXPECT_DOUBLE_EQ(records[k].modelled_s, expected[k].seconds) << k;
      EXPECT_GE(records[k].measured_s, 0.0);
      sum += {1, records[k].bytes_sent, records[k].bytes_received, records[k].measured_s,
              records[k].modelled_s};
    }
    EXPECT_EQ(records[0].payload_bytes, 1001u * 4);
    EXPECT_EQ(comm.totals().calls, 4u);
    EXPECT_EQ(comm.totals().bytes_sent, sum.bytes_sent);
    EXPECT_DOUBLE_EQ(comm.totals().modelled_s, sum.modelled_s);
    if (w > 1) EXPECT_GT(comm.totals().modelled_s, 0.0);
    // A repeated call (served from the cost cache) is charged exactly as the first.
    comm.all_reduce(std::span<float>(v), ReduceOp::Sum);
    const CollectiveRecord& again = comm.records().back();
    EXPECT_EQ(again.bytes_sent, comm.records()[0].bytes_sent);
    EXPECT_EQ(again.bytes_received, comm.records()[0].bytes_received);
    EXPECT_EQ(again.modelled_s, comm.records()[0].modelled_s);
    comm.clear_records();
    sum = comm.totals() - sum;  // the repeated call alone
    EXPECT_EQ(sum.calls, 1u);
    EXPECT_EQ(sum.bytes_sent, expected[0].bytes_sent[r]);
  }
}

TEST(Communicator, OffModeChargesNoModelledTime) {
  Communicator comm(MPI_COMM_WORLD, {.network = NetworkModel(network_scenario("consumer").link)});
  std::vector<double> v(100, 1.0);
  comm.all_reduce(std::span<double>(v), ReduceOp::Sum);
  EXPECT_EQ(comm.totals().modelled_s, 0.0);
  if (comm.size() > 1) EXPECT_GT(comm.totals().bytes_sent, 0u);  // bytes are always counted
}

// The simulated clock: before each collective the slowest rank's compute, then the modelled
// time; the same on all ranks once synchronised. Rank 0 is slow before the first collective and
// the last rank before the second, so the clock must hold both delays (taking the maximum of
// each rank's total compute instead would hold only one).
TEST(Communicator, SimulatedClockTakesTheSlowestRankAtEachCollective) {
  const NetworkModel network(Link{.latency_s = 0.5, .upload_bytes_per_s = 1e6, .download_bytes_per_s = 1e6});
  Communicator comm(MPI_COMM_WORLD, {.network = network, .mode = NetworkMode::Simulate});
  const int last = comm.size() - 1;
  std::vector<double> v(1000, 1.0);
  if (comm.rank() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(200));
  comm.all_reduce(std::span<double>(v), ReduceOp::Sum);
  if (comm.rank() == last) std::this_thread::sleep_for(std::chrono::milliseconds(200));
  comm.all_reduce(std::span<double>(v), ReduceOp::Sum);
  comm.clock().settle();
  const double clock = comm.clock().seconds();
  const double modelled = 2 * network.all_reduce(AllReduceAlgorithm::Ring, comm.size(), 1000, 8).seconds;
  const double slept = 0.4;  // with one rank, it sleeps both times itself
  EXPECT_GE(clock, slept + modelled);
  EXPECT_LT(clock, slept + modelled + 5.0);  // generous: the machine is shared and oversubscribed
  // Nothing slept for the network: wall time in collectives is far below the modelled time.
  if (comm.size() > 1) EXPECT_LT(comm.totals().measured_s, modelled);
  double spread[2] = {clock, -clock}, worst[2];
  MPI_Allreduce(spread, worst, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  EXPECT_LT(worst[0] + worst[1], 0.1) << "clocks differ across ranks after settle()";
}

// A step that sends nothing (DiLoCo's inner steps) still takes its compute on the clock, at the
// slowest rank's pace, as soon as it is settled, and a settled step ends where the next starts.
TEST(Communicator, ClockAdvancesOverStepsWithoutCollectives) {
  for (const NetworkMode mode : {NetworkMode::Simulate, NetworkMode::Off}) {
    Communicator comm(MPI_COMM_WORLD, {.network = NetworkModel(network_scenario("consumer").link), .mode = mode});
    double previous = comm.clock().settle().simulated_s;
    for (int step = 0; step < 3; ++step) {
      const int ms = comm.rank() == comm.size() - 1 ? 60 : 20;  // the last rank is the slowest
      std::this_thread::sleep_for(std::chrono::milliseconds(ms));
      const double settled = comm.clock().settle().simulated_s;
      EXPECT_GE(settled - previous, 0.001 * (mode == NetworkMode::Off ? 20 : 60)) << "step " << step;
      // Right after the settlement the clock reads the settled value plus the moments since
      // (generous: a rank of an oversubscribed machine can wait for a core).
      EXPECT_NEAR(comm.clock().seconds(), settled, 0.25);
      previous = settled;
    }
  }
}

TEST(Communicator, ClockSynchronisesItselfAfterManyCollectives) {
  Communicator comm(MPI_COMM_WORLD, {.network = NetworkModel(network_scenario("10gbps").link),
                                     .mode = NetworkMode::Simulate});
  // Without the automatic synchronisation the ranks' clocks would drift apart by the delay.
  if (comm.rank() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(300));
  for (std::size_t i = 0; i < RunClock::kMaxPendingEvents; ++i) comm.barrier();
  const double clock = comm.clock().seconds();
  EXPECT_GE(clock, 0.3);
  double spread[2] = {clock, -clock}, worst[2];
  MPI_Allreduce(spread, worst, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  EXPECT_LT(worst[0] + worst[1], 0.25);
}

// Throttle: every collective takes its modelled time from the moment the last rank arrived, on
// every rank. The last rank computes 300 ms first; an early rank must still wait for it and then
// for the modelled time, so nobody leaves before 0.3 s + modelled after the common start.
TEST(Communicator, ThrottleCountsModelledTimeFromTheLastArrival) {
  const NetworkModel network(Link{.latency_s = 0.1, .upload_bytes_per_s = 50e6, .download_bytes_per_s = 50e6});
  Communicator comm(MPI_COMM_WORLD, {.network = network, .mode = NetworkMode::Throttle, .keep_records = true});
  std::vector<float> v(100000, 1.0f);
  std::vector<float> all(v.size() * comm.size());
  MPI_Barrier(MPI_COMM_WORLD);
  const auto start = std::chrono::steady_clock::now();
  if (comm.rank() == comm.size() - 1) std::this_thread::sleep_for(std::chrono::milliseconds(300));
  comm.all_reduce(std::span<float>(v), ReduceOp::Sum);
  const double after_reduce = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  comm.all_gather(std::span<const float>(v), std::span<float>(all));
  comm.broadcast(std::span<float>(v), 0);
  comm.barrier();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  const auto records = comm.records();
  ASSERT_EQ(records.size(), 4u);
  // The ranks leave MPI_Barrier at slightly different times, so this rank's `start` may be later
  // than the sleeping rank's: the bounds allow 5 ms of that (a sanitizer run at 4 ranks on 2 cores
  // missed by 0.1 ms without it); the modelled time they check is over 0.1 s.
  constexpr double kBarrierSkew = 5e-3;
  EXPECT_GE(after_reduce, 0.3 + records[0].modelled_s - kBarrierSkew)
      << "left before the last rank's data could arrive";
  double modelled = 0.0;
  for (const CollectiveRecord& record : records) {
    EXPECT_GE(record.measured_s, record.modelled_s) << to_string(record.kind);
    modelled += record.modelled_s;
  }
  EXPECT_GE(wall, 0.3 + modelled - kBarrierSkew);
  EXPECT_FLOAT_EQ(v[0], static_cast<float>(comm.size()));
  // The simulated clock in Throttle mode is real time, the same on every rank once synchronised.
  comm.clock().settle();
  const double clock = comm.clock().seconds();
  EXPECT_GE(clock, 0.3 + modelled);
  double spread[2] = {clock, -clock}, worst[2];
  MPI_Allreduce(spread, worst, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  EXPECT_LT(worst[0] + worst[1], 0.05);
}

TEST(Communicator, RejectsLinksThatCannotBeModelled) {
  EXPECT_THROW(NetworkModel(Link{.latency_s = std::numeric_limits<double>::infinity()}), ConfigError);
  EXPECT_THROW(NetworkModel(Link{.latency_s = 0, .upload_bytes_per_s = 0}), ConfigError);
  const CommunicatorOptions doubling{.all_gather_algorithm = AllGatherAlgorithm::RecursiveDoubling};
  if (is_power_of_two(world_size())) {
    EXPECT_NO_THROW(Communicator(MPI_COMM_WORLD, doubling).barrier());
  } else {
    EXPECT_THROW(Communicator(MPI_COMM_WORLD, doubling), ConfigError);
  }
}

}  // namespace
}  // namespace lowcomm
