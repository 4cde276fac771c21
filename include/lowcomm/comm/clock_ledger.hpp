#pragma once
// This rank's side of the simulated clock (simulated_clock.hpp): the clock events of its
// collectives since the last settlement, and the settlement itself, which gathers every rank's
// events over the control channel (uncounted) and replays them, so every rank computes the same
// clock. The Communicator tells it when each call arrived and returned; the compute between two
// calls is the time in between.
#include <cstdint>
#include <vector>

#include "lowcomm/comm/collective.hpp"
#include "lowcomm/comm/control_channel.hpp"
#include "lowcomm/comm/simulated_clock.hpp"

namespace lowcomm {

// What one settlement found, on this rank.
struct ClockSettlement {
  double exposed_s = 0.0;    // communication this rank waited for, since the previous settlement
  double hidden_s = 0.0;     // communication overlapped with its compute, since then
  double simulated_s = 0.0;  // the settled clock: identical on every rank
};

class ClockLedger {
 public:
  // Rule::Modelled: collectives take their modelled durations (network.mode = simulate);
  // Rule::Measured: the wall clock. `local`: each rank settles its own clock alone (network.mode
  // = off, or one rank), with no message. Every rank of `control` must construct one alike.
  ClockLedger(SimulatedClock::Rule rule, bool local, const ControlChannel& control, double now);

  void set_compute_scales(std::vector<double> scales) { clock_.set_compute_scales(std::move(scales)); }

  // A call arrived at `arrival` (the compute since the previous call returned ends there):
  // a blocking collective of `seconds`, the start of a non-blocking one (its modelled duration)
  // or the wait for one (the time this rank was blocked).
  void record(ClockEventKind kind, std::uint64_t collective, CollectiveKind what, double arrival, double seconds);
  // The call returned at `now`: compute counts again from here.
  void returned(double now) { last_exit_ = now; }

  // Whether kMaxPendingEvents are waiting for a settlement (every rank reaches it at the same
  // call): the Communicator then settles by itself, to bound memory.
  bool full() const { return events_.size() >= kMaxPendingEvents; }
  static constexpr std::size_t kMaxPendingEvents = 4096;

  // Collective over the control channel (unless local): settles every rank's events since the
  // last settlement and its compute since its last call, up to `now` (so a step without
  // collectives advances the clock by its compute), and draws the settled stretches on the
  // timeline when it is on. The caller says returned() after it: the settlement is bookkeeping.
  ClockSettlement settle(double now);

  // The clock, including this rank's compute since its last call (`now`), as Communicator's
  // simulated_seconds() says.
  double simulated_seconds(double now) const;
  void advance(double seconds) { clock_.advance(seconds); }
  const OverlapTotals& overlap() const { return clock_.totals(); }

 private:
  void settle_events(std::span<const std::vector<ClockEvent>> events);
  ClockSettlement settled_since(const OverlapTotals& before) const;

  SimulatedClock clock_;
  SimulatedClock::Rule rule_;
  bool local_;
  const ControlChannel& control_;
  std::vector<ClockEvent> events_;
  double last_exit_ = 0.0;  // wall time when the previous collective call returned
};

}  // namespace lowcomm
