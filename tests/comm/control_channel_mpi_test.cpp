// ControlChannel on real MPI ranks: every operation checked on data, rank order kept, and none
// of its traffic counted by the Communicator it belongs to. Runs at 1, 2, 3 and 4 ranks.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "lowcomm/comm/communicator.hpp"
#include "lowcomm/comm/network_scenarios.hpp"

namespace lowcomm {
namespace {

struct Metrics {
  std::int32_t rank;
  double loss;
};

TEST(ControlChannel, ReductionsGathersAndBroadcastOnData) {
  const ControlChannel control(MPI_COMM_WORLD);
  const int w = control.size(), r = control.rank();
  EXPECT_EQ(control.max(r), w - 1);
  EXPECT_EQ(control.min(r + 10), 10);
  EXPECT_EQ(control.sum(std::int64_t{r}), std::int64_t{w} * (w - 1) / 2);
  EXPECT_DOUBLE_EQ(control.sum(0.5), 0.5 * w);

  std::int32_t flags[2] = {r, -r};
  control.max_each(std::span<std::int32_t>(flags));
  EXPECT_EQ(flags[0], w - 1);
  EXPECT_EQ(flags[1], 0);
  control.min_each(std::span<std::int32_t>(flags));  // already agreed: unchanged
  EXPECT_EQ(flags[0], w - 1);
  std::vector<float> values{static_cast<float>(r), 1.0f};
  control.sum_each(std::span<float>(values));
  EXPECT_EQ(values, (std::vector<float>{static_cast<float>(w * (w - 1) / 2), static_cast<float>(w)}));

  const std::vector<Metrics> everyone = control.all_gather(Metrics{r, 0.25 * r});
  ASSERT_EQ(everyone.size(), static_cast<std::size_t>(w));
  for (int k = 0; k < w; ++k) {
    EXPECT_EQ(everyone[k].rank, k);
    EXPECT_EQ(everyone[k].loss, 0.25 * k);
  }
  const std::vector<Metrics> at_root = control.gather_to_root(Metrics{r, 2.0 * r});
  if (control.is_root()) {
    ASSERT_EQ(at_root.size(), static_cast<std::size_t>(w));
    for (int k = 0; k < w; ++k) EXPECT_EQ(at_root[k].loss, 2.0 * k);
  } else {
    EXPECT_TRUE(at_root.empty());
  }
  EXPECT_EQ(control.broadcast(r == 0 ? std::int64_t{42} : std::int64_t{-1}), 42);
  control.barrier();
}

TEST(ControlChannel, StreamsEveryRanksValuesToRootInRankOrder) {
  const ControlChannel control(MPI_COMM_WORLD);
  const std::vector<float> mine(5, static_cast<float>(control.rank() + 1));
  std::vector<int> order;
  control.stream_to_root(mine, [&](int rank, std::span<const float> values) {
    order.push_back(rank);
    ASSERT_EQ(values.size(), 5u);
    for (float v : values) EXPECT_EQ(v, static_cast<float>(rank + 1));
  });
  std::vector<int> expected;
  if (control.is_root()) {
    for (int k = 0; k < control.size(); ++k) expected.push_back(k);
  }
  EXPECT_EQ(order, expected);  // the callback runs on rank 0 only
}

TEST(ControlChannel, ItsTrafficIsNeverCountedNorCharged) {
  Communicator comm(MPI_COMM_WORLD, {.network = NetworkModel(network_scenario("consumer").link),
                                     .mode = NetworkMode::Simulate});
  const ControlChannel& control = comm.control();
  EXPECT_EQ(control.size(), comm.size());
  EXPECT_EQ(control.rank(), comm.rank());
  control.all_gather(std::int64_t{comm.rank()});
  control.gather_to_root(3.0);
  control.sum(1.0);
  control.stream_to_root(std::vector<float>(1000, 1.0f), [](int, std::span<const float>) {});
  const CommCounters totals = comm.totals();
  EXPECT_EQ(totals.calls, 0u);
  EXPECT_EQ(totals.bytes_sent, 0u);
  EXPECT_EQ(totals.modelled_s, 0.0);
}

}  // namespace
}  // namespace lowcomm
