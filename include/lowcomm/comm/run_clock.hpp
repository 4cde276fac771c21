#pragma once
// The run's simulated clock (docs/network-model.md, "The simulated clock"). The run owns it and
// hands it to its Communicator, which tells it when each collective call arrived and returned;
// the compute between two calls is the time in between, measured on the wall clock, or, where
// the run models its compute (cluster.step_compute_ms, cluster.compute_tflops), exactly what the
// run charges with charge_compute(), so that the clock repeats to the bit. A settlement gathers
// every rank's events over the control channel (uncounted) and replays them (simulated_clock.hpp),
// so every rank computes the same clock.
#include <cstdint>
#include <optional>
#include <vector>

#include "lowcomm/comm/collective.hpp"
#include "lowcomm/comm/control_channel.hpp"
#include "lowcomm/comm/network_pacing.hpp"
#include "lowcomm/comm/simulated_clock.hpp"

namespace lowcomm {

// What one settlement found, on this rank.
struct ClockSettlement {
  double exposed_s = 0.0;    // communication this rank waited for, since the previous settlement
  double hidden_s = 0.0;     // communication overlapped with its compute, since then
  double simulated_s = 0.0;  // the settled clock: identical on every rank
};

// cluster.*'s part of the clock (clock_options_from_config, network_config.hpp, reads them).
struct ClockOptions {
  // Stragglers (network.mode = simulate): rank r's compute counts compute_scales[r] times as long
  // (SimulatedClock::set_compute_scales). Empty: every rank as it is; otherwise one per rank.
  std::vector<double> compute_scales;
  // Modelled compute: a training step's compute is this many seconds on the clock, not measured
  // (cluster.step_compute_ms), or its FLOPs at this rate (cluster.compute_tflops, in FLOP/s).
  // At most one is set; neither: measured.
  std::optional<double> step_compute_s;
  std::optional<double> compute_flops_per_s;

  bool modelled_compute() const { return step_compute_s || compute_flops_per_s; }
  // The seconds one step's compute is charged, for a step of `step_flops` floating-point operations.
  double step_compute_seconds(double step_flops) const;
};

class RunClock {
 public:
  // Collective over `control`: every rank constructs its clock alike. `mode` gives the rule
  // (simulate: collectives take their modelled durations; off, throttle: the wall clock) and, for
  // off or one rank, a clock each rank settles alone. Throws ConfigError for compute scales that
  // are not one per rank, or modelled compute outside mode simulate.
  RunClock(const ControlChannel& control, NetworkMode mode, ClockOptions options = {});
  RunClock(const RunClock&) = delete;
  RunClock& operator=(const RunClock&) = delete;

  // ---- what the run does with it ----

  // Collective: settles every rank's collective calls since the last settlement and its compute
  // since its last call (one all-gather of the ranks' call lists, so the clock costs no message
  // per collective). Call it once per training step, whether or not the step communicated: that
  // step's compute moves the clock. Returns this rank's exposed and hidden communication since
  // the previous settlement, and the settled clock (the same on every rank).
  ClockSettlement settle();
  // Seconds on the clock, including this rank's compute since its last call. Exact, and identical
  // on all ranks, right after settle(); between settlements it counts this rank's own compute
  // where the slowest rank's belongs, and a non-blocking collective as if it were hidden.
  double seconds() const;
  // Moves the clock forward by `seconds` on this rank (every rank alike): a resumed run continues
  // the clock where its checkpoint left it.
  void advance(double seconds) { clock_.advance(seconds); }
  // This rank's communication on the settled clock: exposed (the rank waited) and hidden
  // (overlapped with its compute). Subtract two snapshots around settle() for a step.
  const OverlapTotals& overlap() const { return clock_.totals(); }

  // Measured compute: the wall time since the last call is not compute (set-up, validation,
  // checkpoints between two steps); compute counts again from now. Modelled: nothing to do.
  void resume_compute();
  // Modelled compute: `seconds` more of this rank's compute (before its scale). Ignored when the
  // compute is measured.
  void charge_compute(double seconds);
  const ClockOptions& options() const { return options_; }

  // ---- what the Communicator tells it ----

  // A call arrived at wall time `arrival` (the compute since the previous call returned ends
  // there): a blocking collective of `seconds`, the start of a non-blocking one (its modelled
  // duration) or the wait for one (the time this rank was blocked).
  void record(ClockEventKind kind, std::uint64_t collective, CollectiveKind what, double arrival, double seconds);
  // The call returned at wall time `now`: compute counts again from here. After
  // kMaxPendingEvents calls (on all ranks at the same one) it settles by itself, to bound memory.
  void returned(double now);
  static constexpr std::size_t kMaxPendingEvents = 4096;

 private:
  // The compute clock: the wall clock, or the compute charged so far.
  double compute_clock(double wall) const { return modelled_ ? charged_s_ : wall; }
  ClockSettlement settle_at(double now);
  void settle_events(std::span<const std::vector<ClockEvent>> events);
  ClockSettlement settled_since(const OverlapTotals& before) const;

  const ControlChannel& control_;
  ClockOptions options_;
  SimulatedClock clock_;
  SimulatedClock::Rule rule_;
  bool local_;
  bool modelled_;
  double charged_s_ = 0.0;  // modelled compute charged since the start
  std::vector<ClockEvent> events_;
  double last_exit_ = 0.0;  // the compute clock when the previous collective call returned
};

}  // namespace lowcomm
