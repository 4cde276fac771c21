#include "lowcomm/comm/run_clock.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "lowcomm/core/timeline.hpp"
#include "lowcomm/error.hpp"

namespace lowcomm {

double ClockOptions::step_compute_seconds(double step_flops) const {
  if (step_compute_s) return *step_compute_s;
  if (compute_flops_per_s) return step_flops / *compute_flops_per_s;
  return 0.0;
}

RunClock::RunClock(const ControlChannel& control, NetworkMode mode, ClockOptions options)
    : control_(control),
      options_(std::move(options)),
      clock_(clock_rule(mode)),
      rule_(clock_rule(mode)),
      local_(mode == NetworkMode::Off || control.size() == 1),
      modelled_(options_.modelled_compute()),
      last_exit_(modelled_ ? 0.0 : wall_seconds()) {
  if (!options_.compute_scales.empty() && options_.compute_scales.size() != static_cast<std::size_t>(control.size())) {
    throw ConfigError(fmt::format("{} compute scales for a job of {} ranks: give one per rank, or none",
                                  options_.compute_scales.size(), control.size()));
  }
  if (modelled_ && mode != NetworkMode::Simulate) {
    throw ConfigError(fmt::format("modelled compute (cluster.step_compute_ms, cluster.compute_tflops) is a time on "
                                  "the simulated clock, which network.mode = \"{}\" makes the wall clock: set "
                                  "network.mode = \"simulate\", or leave the compute measured",
                                  to_string(mode)));
  }
  clock_.set_compute_scales(options_.compute_scales);
}

void RunClock::record(ClockEventKind kind, std::uint64_t collective, CollectiveKind what, double arrival,
                      double seconds) {
  events_.push_back({kind, collective, compute_clock(arrival) - last_exit_, seconds, what});
}

void RunClock::returned(double now) {
  last_exit_ = compute_clock(now);
  if (events_.size() >= kMaxPendingEvents) settle_at(now);
}

void RunClock::resume_compute() { last_exit_ = compute_clock(wall_seconds()); }

void RunClock::charge_compute(double seconds) {
  if (modelled_) charged_s_ += seconds;
}

ClockSettlement RunClock::settle() { return settle_at(wall_seconds()); }

double RunClock::seconds() const {
  double clock = clock_.settled_s() + (compute_clock(wall_seconds()) - last_exit_);
  for (const ClockEvent& event : events_) {
    clock += event.compute_before_s;
    const bool measured_wait = event.kind == ClockEventKind::Wait && rule_ == SimulatedClock::Rule::Measured;
    if (event.kind == ClockEventKind::Blocking || measured_wait) clock += event.seconds;
  }
  return clock;
}

ClockSettlement RunClock::settled_since(const OverlapTotals& before) const {
  return {.exposed_s = clock_.totals().exposed_s - before.exposed_s,
          .hidden_s = clock_.totals().hidden_s - before.hidden_s,
          .simulated_s = clock_.settled_s()};
}

ClockSettlement RunClock::settle_at(double now) {
  const OverlapTotals before = clock_.totals();
  record(ClockEventKind::Settle, 0, CollectiveKind::AllReduce, now, 0.0);
  if (local_) {
    settle_events(std::span(&events_, 1));  // network.mode = off: the clock is this rank's wall clock
  } else {
    const int rank = control_.rank();
    const auto ranks = static_cast<std::size_t>(control_.size());
    const std::uint64_t mine = events_.size();
    const std::vector<std::uint64_t> lengths = control_.all_gather(mine);
    std::vector<std::vector<ClockEvent>> events(ranks);
    if (std::ranges::any_of(lengths, [&](std::uint64_t n) { return n != mine; })) {
      // Let the clock name the ranks that differ (the lists themselves are not needed for that).
      for (std::size_t r = 0; r < ranks; ++r) events[r].resize(lengths[r], ClockEvent{});
      clock_.settle(events, rank);
    }
    // Every rank's calls, four doubles each (kind, number, compute before, seconds): numbers
    // below 2^53 are exact in a double.
    std::vector<double> packed;
    packed.reserve(4 * mine);
    for (const ClockEvent& e : events_) {
      packed.insert(packed.end(), {static_cast<double>(e.kind), static_cast<double>(e.collective),
                                   e.compute_before_s, e.seconds});
    }
    std::vector<double> all(packed.size() * ranks);
    control_.all_gather_each(std::span<const double>(packed), std::span<double>(all));
    for (std::size_t r = 0; r < ranks; ++r) {
      if (r == static_cast<std::size_t>(rank)) {
        events[r] = events_;  // the rank's own, with what the timeline names them by
        continue;
      }
      events[r].resize(mine);
      for (std::size_t i = 0; i < mine; ++i) {
        const double* e = &all[(r * mine + i) * 4];
        events[r][i] = {static_cast<ClockEventKind>(static_cast<int>(e[0])), static_cast<std::uint64_t>(e[1]), e[2],
                        e[3]};
      }
    }
    settle_events(events);
  }
  events_.clear();
  last_exit_ = compute_clock(wall_seconds());  // the settlement is bookkeeping, not compute
  return settled_since(before);
}

void RunClock::settle_events(std::span<const std::vector<ClockEvent>> events) {
  const int rank = events.size() == 1 ? 0 : control_.rank();
  Timeline& timeline = Timeline::global();
  if (!timeline.enabled()) {
    clock_.settle(events, rank);
    return;
  }
  std::vector<ClockSpan> spans;
  clock_.settle(events, rank, &spans);
  for (const ClockSpan& span : spans) {
    if (!span.collective) {
      timeline.record("compute", "compute", span.begin_s, span.end_s, /*simulated=*/true);
    } else {
      const std::string name = std::string(to_string(span.what)) + (span.overlapped ? " (overlapped)" : "");
      timeline.record(span.overlapped ? "network (overlapped)" : "network", name, span.begin_s, span.end_s, true);
    }
  }
}

}  // namespace lowcomm
