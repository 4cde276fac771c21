#include "lowcomm/comm/clock_ledger.hpp"

#include <algorithm>
#include <string>

#include "lowcomm/core/timeline.hpp"

namespace lowcomm {

ClockLedger::ClockLedger(SimulatedClock::Rule rule, bool local, const ControlChannel& control, double now)
    : clock_(rule), rule_(rule), local_(local), control_(control), last_exit_(now) {}

void ClockLedger::record(ClockEventKind kind, std::uint64_t collective, CollectiveKind what, double arrival,
                         double seconds) {
  events_.push_back({kind, collective, arrival - last_exit_, seconds, what});
}

double ClockLedger::simulated_seconds(double now) const {
  double clock = clock_.settled_s() + (now - last_exit_);
  for (const ClockEvent& event : events_) {
    clock += event.compute_before_s;
    const bool measured_wait = event.kind == ClockEventKind::Wait && rule_ == SimulatedClock::Rule::Measured;
    if (event.kind == ClockEventKind::Blocking || measured_wait) clock += event.seconds;
  }
  return clock;
}

ClockSettlement ClockLedger::settled_since(const OverlapTotals& before) const {
  return {.exposed_s = clock_.totals().exposed_s - before.exposed_s,
          .hidden_s = clock_.totals().hidden_s - before.hidden_s,
          .simulated_s = clock_.settled_s()};
}

ClockSettlement ClockLedger::settle(double now) {
  const OverlapTotals before = clock_.totals();
  record(ClockEventKind::Settle, 0, CollectiveKind::AllReduce, now, 0.0);
  if (local_) {
    settle_events(std::span(&events_, 1));  // network.mode = off: the clock is this rank's wall clock
    events_.clear();
    return settled_since(before);
  }
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
  // Every rank's calls, four doubles each (kind, number, compute before, seconds): numbers below
  // 2^53 are exact in a double.
  std::vector<double> packed;
  packed.reserve(4 * mine);
  for (const ClockEvent& e : events_) {
    packed.insert(packed.end(), {static_cast<double>(e.kind), static_cast<double>(e.collective), e.compute_before_s,
                                 e.seconds});
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
  events_.clear();
  return settled_since(before);
}

void ClockLedger::settle_events(std::span<const std::vector<ClockEvent>> events) {
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
