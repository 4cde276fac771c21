#pragma once
// The simulated clock's arithmetic, without MPI (docs/network-model.md, "The simulated clock").
// Each rank records, between two settlements, a list of clock events: a blocking collective, the
// start of a non-blocking one, or the wait for it, each with the rank's compute before it, and
// last the settlement itself with the rank's compute since its last call (a step that sends
// nothing, DiLoCo's inner steps, still moves the clock by its compute). The
// Communicator gathers every rank's list and hands them to SimulatedClock::settle, which replays
// them for all ranks at once, so every rank computes the same clock.
//
// The rules, with c_r the clock of rank r:
// - a collective begins when its last rank has called it (S = max_r c_r after its compute), and
//   not before the network has finished the collectives started earlier (the ranks share their
//   links: collectives in flight are served one after another): N = max(S, network_free);
// - it ends at F = N + d, its duration: modelled (network.mode = simulate) or measured;
// - a blocking collective leaves every rank at F; its exposed time is F - S;
// - a rank waiting for a non-blocking collective at c_r is held until F: its exposed time is
//   max(0, F - max(c_r, S)), the time it waits once every rank has started it (waiting for a
//   late rank to start is load imbalance, not communication). For a collective started at t and
//   waited for at t' on level ranks with an idle network, that is max(0, d - (t' - t)).
// The hidden time is the durations minus the exposed time, over all collectives settled: a
// rank that waits for a collective queued behind others waits for theirs too, so theirs is not
// hidden (per collective the split is ambiguous; the totals are not), and exposed + hidden is
// the sum of the durations.
// With Rule::Measured (network.mode = off or throttle) the clock is the ranks' wall clock instead:
// a wait adds the time the rank really spent blocked, which is then its exposed time, and the
// modelled duration, when there is one, minus that is hidden.
//
// After each settlement the ranks are level at the latest of their clocks (a training step ends
// with an agreement between the ranks), and a collective still in flight keeps its N and F for
// the wait of a later settlement.
#include <cstdint>
#include <map>

#include "lowcomm/comm/collective.hpp"
#include <span>
#include <vector>

namespace lowcomm {

// Settle closes every rank's list: the compute after its last collective, no collective.
enum class ClockEventKind : std::uint8_t { Blocking, Start, Wait, Settle };

struct ClockEvent {
  ClockEventKind kind;
  std::uint64_t collective;   // the Start and Wait of one collective carry the same number
  double compute_before_s;    // this rank's compute since its previous event
  // Blocking: the duration (modelled, or measured on this rank); Start: the modelled duration,
  // 0 when nothing is modelled; Wait: the measured time this rank was blocked (Rule::Measured);
  // Settle: 0.
  double seconds;
  CollectiveKind what = CollectiveKind::AllReduce;  // for the timeline only; not compared
};

// A stretch of one rank's settled clock, for the timeline: its compute between two calls, or a
// collective from its begin to its end (N to F).
struct ClockSpan {
  bool collective;
  CollectiveKind what;
  bool overlapped;  // a non-blocking collective
  double begin_s, end_s;
};

// This rank's communication on the clock, summed over every settled collective.
struct OverlapTotals {
  double exposed_s = 0.0;  // the rank waited for the network
  double hidden_s = 0.0;   // the rest of the collectives' durations: the network worked while the rank computed
};

class SimulatedClock {
 public:
  enum class Rule : std::uint8_t { Modelled, Measured };

  explicit SimulatedClock(Rule rule) : rule_(rule) {}

  // Stragglers (Rule::Modelled only; the measured rule is the wall clock): rank r's compute
  // counts scales[r] times its measured length, so a rank 2x slower is one that took 2x as
  // long. Empty: every rank as measured. Throws ConfigError for a scale that is not positive.
  void set_compute_scales(std::vector<double> scales);

  // events[r] is rank r's list since the previous settlement; `rank` says whose totals to keep.
  // Every list must hold the same collectives in the same order (kind and number): CommError
  // otherwise. A one-element span settles one rank's own clock (network.mode = off).
  // With `spans`, appends the rank's settled stretches to it.
  void settle(std::span<const std::vector<ClockEvent>> events, int rank, std::vector<ClockSpan>* spans = nullptr);

  double settled_s() const { return settled_s_; }
  void advance(double seconds) { settled_s_ += seconds; }
  const OverlapTotals& totals() const { return totals_; }

 private:
  struct InFlight {
    double all_started_s;  // S
    double begins_s;    // N
    double ends_s;      // F
    double duration_s;  // d
    double started_s;   // the rank's clock at its start (Rule::Measured: N is not known)
  };

  double compute(std::span<const std::vector<ClockEvent>> events, std::size_t rank, std::size_t i) const;

  Rule rule_;
  std::vector<double> compute_scales_;  // per rank; empty: 1
  double settled_s_ = 0.0;
  double network_free_s_ = 0.0;
  std::map<std::uint64_t, InFlight> in_flight_;  // started, not yet waited for
  OverlapTotals totals_;
};

}  // namespace lowcomm
