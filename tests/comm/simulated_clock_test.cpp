// The simulated clock's rules (simulated_clock.hpp) on hand-made call lists with known compute
// times: blocking collectives as before overlap existed, a non-blocking one exposed for
// max(0, d - (t' - t)), collectives in flight served one after another, a collective in flight
// across a settlement, the compute a settlement closes, and the measured rule.
#include <gtest/gtest.h>

#include <vector>

#include "lowcomm/comm/simulated_clock.hpp"
#include "lowcomm/error.hpp"

namespace lowcomm {
namespace {

using enum ClockEventKind;

ClockEvent blocking(std::uint64_t id, double compute, double seconds) { return {Blocking, id, compute, seconds}; }
ClockEvent start(std::uint64_t id, double compute, double seconds) { return {Start, id, compute, seconds}; }
ClockEvent wait(std::uint64_t id, double compute, double blocked = 0.0) { return {Wait, id, compute, blocked}; }
ClockEvent settlement(double compute) { return {Settle, 0, compute, 0.0}; }

// Before each blocking collective the slowest rank's compute, then its duration; all exposed.
TEST(SimulatedClock, BlockingCollectivesAddTheSlowestComputeAndTheirDuration) {
  SimulatedClock clock(SimulatedClock::Rule::Modelled);
  const std::vector<std::vector<ClockEvent>> ranks{{blocking(0, 0.2, 1.0), blocking(1, 0.0, 0.5)},
                                                   {blocking(0, 0.0, 1.0), blocking(1, 0.3, 0.5)}};
  clock.settle(ranks, 1);
  EXPECT_DOUBLE_EQ(clock.settled_s(), 0.2 + 1.0 + 0.3 + 0.5);
  EXPECT_DOUBLE_EQ(clock.totals().exposed_s, 1.5);
  EXPECT_DOUBLE_EQ(clock.totals().hidden_s, 0.0);
}

// A collective of duration d started at t and waited for at t' is exposed max(0, d - (t' - t)).
TEST(SimulatedClock, AWaitIsExposedForWhatComputeDidNotHide) {
  const double d = 1.0;
  for (const double compute : {0.0, 0.25, 0.999, 1.0, 3.0}) {
    SimulatedClock clock(SimulatedClock::Rule::Modelled);
    const std::vector<ClockEvent> mine{start(0, 0.5, d), wait(0, compute)};
    clock.settle(std::vector{mine, mine, mine}, 2);
    const double exposed = std::max(0.0, d - compute);
    EXPECT_NEAR(clock.totals().exposed_s, exposed, 1e-12) << "compute " << compute;
    EXPECT_NEAR(clock.totals().hidden_s, d - exposed, 1e-12) << "compute " << compute;
    EXPECT_DOUBLE_EQ(clock.settled_s(), 0.5 + std::max(d, compute)) << "compute " << compute;
  }
}

// The collective begins when its last rank has started it; a rank that computes longer after
// its start than the others hides more of it.
TEST(SimulatedClock, ACollectiveBeginsWhenItsLastRankStartsIt) {
  SimulatedClock clock(SimulatedClock::Rule::Modelled);
  const std::vector<std::vector<ClockEvent>> ranks{{start(7, 0.0, 1.0), wait(7, 0.2)},
                                                   {start(7, 0.4, 1.0), wait(7, 0.2)}};
  clock.settle(ranks, 0);
  // Begins at 0.4, ends at 1.4; rank 0 waits from 0.2 (before it began) and is exposed for the
  // whole of it; rank 1 from 0.6, exposed for 0.8.
  EXPECT_NEAR(clock.totals().exposed_s, 1.0, 1e-12);
  EXPECT_NEAR(clock.totals().hidden_s, 0.0, 1e-12);
  EXPECT_DOUBLE_EQ(clock.settled_s(), 1.4);
  SimulatedClock other(SimulatedClock::Rule::Modelled);
  other.settle(ranks, 1);
  EXPECT_DOUBLE_EQ(other.totals().exposed_s, 0.8);
  EXPECT_NEAR(other.totals().hidden_s, 0.2, 1e-15);
}

// The ranks share their links: a second collective started while the first is in flight begins
// when the first ends, and so does a blocking one.
TEST(SimulatedClock, CollectivesInFlightAreServedOneAfterAnother) {
  SimulatedClock clock(SimulatedClock::Rule::Modelled);
  const std::vector<ClockEvent> mine{start(0, 0.0, 1.0), start(1, 0.0, 1.0), blocking(2, 0.5, 0.25),
                                     wait(0, 0.0), wait(1, 0.0)};
  clock.settle(std::vector{mine, mine}, 0);
  // 0 runs [0, 1], 1 runs [1, 2], the blocking one [2, 2.25]: the rank computed 0.5 s of the
  // network's 2.25 and waited 1.75 (from 0.5); both waits then find their collectives done.
  EXPECT_DOUBLE_EQ(clock.settled_s(), 2.25);
  EXPECT_DOUBLE_EQ(clock.totals().exposed_s, 1.75);
  EXPECT_DOUBLE_EQ(clock.totals().hidden_s, 0.5);
}

// Waited for in the reverse order of their starts (DDP's buckets: the last bucket leaves first):
// the first wait holds the rank while the network serves all of them, so nothing is hidden but
// what ran during the compute before it.
TEST(SimulatedClock, AWaitQueuedBehindOthersIsExposedForTheQueueToo) {
  SimulatedClock clock(SimulatedClock::Rule::Modelled);
  const std::vector<ClockEvent> mine{start(0, 0.0, 1.0), start(1, 0.0, 1.0), start(2, 0.0, 1.0),
                                     wait(2, 0.25), wait(1, 0.0), wait(0, 0.0)};
  clock.settle(std::vector{mine, mine}, 0);
  EXPECT_DOUBLE_EQ(clock.settled_s(), 3.0);
  EXPECT_DOUBLE_EQ(clock.totals().exposed_s, 2.75);
  EXPECT_DOUBLE_EQ(clock.totals().hidden_s, 0.25);
}

// DeMo's pipeline: the exchange started at the end of one step is waited for in the next.
TEST(SimulatedClock, ACollectiveInFlightCrossesASettlement) {
  SimulatedClock clock(SimulatedClock::Rule::Modelled);
  const std::vector<ClockEvent> first{start(0, 1.0, 2.0)};
  clock.settle(std::vector{first, first}, 0);
  EXPECT_DOUBLE_EQ(clock.settled_s(), 1.0);
  const std::vector<ClockEvent> second{wait(0, 1.5), start(1, 0.0, 2.0)};
  clock.settle(std::vector{second, second}, 0);
  // Waited at 2.5 for an end at 3.0: 0.5 exposed, 1.5 hidden; the next starts at 3.0.
  EXPECT_DOUBLE_EQ(clock.settled_s(), 3.0);
  EXPECT_DOUBLE_EQ(clock.totals().exposed_s, 0.5);
  EXPECT_DOUBLE_EQ(clock.totals().hidden_s, 1.5);
}

// Off and throttle: the wall clock; a wait adds and exposes what the rank measured.
TEST(SimulatedClock, TheMeasuredRuleAddsWhatEachRankWasBlocked) {
  SimulatedClock clock(SimulatedClock::Rule::Measured);
  const std::vector<std::vector<ClockEvent>> ranks{{start(0, 0.1, 1.0), wait(0, 0.6, 0.4), blocking(1, 0.0, 0.2)},
                                                   {start(0, 0.1, 1.0), wait(0, 0.9, 0.1), blocking(1, 0.0, 0.3)}};
  clock.settle(ranks, 0);
  // Both ranks reach the blocking collective at 1.1; the longer of its measured times, 0.3.
  EXPECT_DOUBLE_EQ(clock.settled_s(), 1.4);
  EXPECT_DOUBLE_EQ(clock.totals().exposed_s, 0.4 + 0.3);
  EXPECT_DOUBLE_EQ(clock.totals().hidden_s, 0.6);
}

// A straggler: rank 1's compute counts three times its measured length, so every collective
// waits for it; the measured rule (the wall clock) ignores the scales.
TEST(SimulatedClock, ComputeScalesMakeStragglers) {
  const std::vector<std::vector<ClockEvent>> ranks{{blocking(0, 0.2, 0.5), start(1, 0.1, 1.0), wait(1, 0.1)},
                                                   {blocking(0, 0.1, 0.5), start(1, 0.1, 1.0), wait(1, 0.1)}};
  SimulatedClock clock(SimulatedClock::Rule::Modelled);
  clock.set_compute_scales({1.0, 3.0});
  clock.settle(ranks, 0);
  // Rank 1 arrives at 0.3, not 0.1; the collective ends at 0.8. Then it starts the second at
  // 0.8 + 0.3 = 1.1 (rank 0 at 0.9), which ends at 2.1; rank 0 waits from 1.0, rank 1 from 1.4.
  EXPECT_NEAR(clock.settled_s(), 2.1, 1e-12);
  EXPECT_NEAR(clock.totals().exposed_s, 0.5 + 1.0, 1e-12);  // rank 0 waits for all of both
  SimulatedClock measured(SimulatedClock::Rule::Measured);
  measured.set_compute_scales({1.0, 3.0});
  measured.settle(std::vector<std::vector<ClockEvent>>{{blocking(0, 0.2, 0.5)}, {blocking(0, 0.1, 0.5)}}, 0);
  EXPECT_NEAR(measured.settled_s(), 0.7, 1e-12);
  EXPECT_THROW(clock.set_compute_scales({1.0, 0.0}), ConfigError);
}

// A settlement counts each rank's compute since its last call: a step without collectives (a
// DiLoCo inner step) moves the clock by its slowest rank's compute, and a step's compute after
// its last collective (the optimizer's update) belongs to that step, not to the next.
TEST(SimulatedClock, ASettlementAddsTheComputeSinceTheLastCall) {
  for (const auto rule : {SimulatedClock::Rule::Modelled, SimulatedClock::Rule::Measured}) {
    SimulatedClock clock(rule);
    clock.set_compute_scales({1.0, 2.0});
    const double scale1 = rule == SimulatedClock::Rule::Modelled ? 2.0 : 1.0;  // stragglers are modelled only
    clock.settle(std::vector<std::vector<ClockEvent>>{{settlement(0.3)}, {settlement(0.2)}}, 0);
    const double inner = std::max(0.3, 0.2 * scale1);
    EXPECT_DOUBLE_EQ(clock.settled_s(), inner);
    clock.settle(std::vector<std::vector<ClockEvent>>{{blocking(0, 0.1, 1.0), settlement(0.25)},
                                                      {blocking(0, 0.1, 1.0), settlement(0.05)}},
                 1);
    EXPECT_DOUBLE_EQ(clock.settled_s(), inner + std::max(0.1, 0.1 * scale1) + 1.0 + std::max(0.25, 0.05 * scale1));
    EXPECT_DOUBLE_EQ(clock.totals().exposed_s, 1.0);
  }
}

TEST(SimulatedClock, RefusesCallListsThatDiffer) {
  SimulatedClock clock(SimulatedClock::Rule::Modelled);
  EXPECT_THROW(clock.settle(std::vector<std::vector<ClockEvent>>{{blocking(0, 0, 1)}, {}}, 0), CommError);
  EXPECT_THROW(clock.settle(std::vector<std::vector<ClockEvent>>{{start(0, 0, 1)}, {blocking(0, 0, 1)}}, 0),
               CommError);
  EXPECT_THROW(clock.settle(std::vector<std::vector<ClockEvent>>{{wait(5, 0)}}, 0), CommError);
}

}  // namespace
}  // namespace lowcomm
