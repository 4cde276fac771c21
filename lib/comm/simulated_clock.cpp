#include "lowcomm/comm/simulated_clock.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "lowcomm/error.hpp"

namespace lowcomm {

namespace {

std::string_view name(ClockEventKind kind) {
  switch (kind) {
    case ClockEventKind::Blocking: return "blocking collective";
    case ClockEventKind::Start: return "start";
    case ClockEventKind::Wait: return "wait";
    case ClockEventKind::Settle: return "settlement";
  }
  return "?";
}

void check_same_sequence(std::span<const std::vector<ClockEvent>> events) {
  for (std::size_t r = 1; r < events.size(); ++r) {
    if (events[r].size() != events[0].size()) {
      throw CommError(fmt::format("simulated clock: rank {} made {} collective calls since the last settlement but "
                                  "rank 0 made {}; every rank must run the same collectives in the same order",
                                  r, events[r].size(), events[0].size()));
    }
    for (std::size_t i = 0; i < events[0].size(); ++i) {
      const ClockEvent& a = events[0][i];
      const ClockEvent& b = events[r][i];
      if (a.kind != b.kind || a.collective != b.collective) {
        throw CommError(fmt::format("simulated clock: call {} since the last settlement is the {} of collective {} "
                                    "on rank 0 but the {} of collective {} on rank {}; every rank must start and "
                                    "wait for its collectives in the same order",
                                    i, name(a.kind), a.collective, name(b.kind), b.collective, r));
      }
    }
  }
}

}  // namespace

void SimulatedClock::set_compute_scales(std::vector<double> scales) {
  for (std::size_t r = 0; r < scales.size(); ++r) {
    if (!(scales[r] > 0) || !std::isfinite(scales[r])) {
      throw ConfigError(fmt::format("rank {}'s compute scale is {}: it must be a positive number", r, scales[r]));
    }
  }
  compute_scales_ = std::move(scales);
}

double SimulatedClock::compute(std::span<const std::vector<ClockEvent>> events, std::size_t rank, std::size_t i) const {
  const double measured = events[rank][i].compute_before_s;
  // The scales are per rank of a settlement over every rank's list.
  if (rule_ != Rule::Modelled || compute_scales_.empty() || events.size() != compute_scales_.size()) return measured;
  return measured * compute_scales_[rank];
}

void SimulatedClock::settle(std::span<const std::vector<ClockEvent>> events, int rank, std::vector<ClockSpan>* spans) {
  if (events.empty()) return;
  check_same_sequence(events);
  const auto me = static_cast<std::size_t>(rank);
  const bool modelled = rule_ == Rule::Modelled;
  std::vector<double> clock(events.size(), settled_s_);
  auto latest = [&] { return *std::ranges::max_element(clock); };

  for (std::size_t i = 0; i < events[0].size(); ++i) {
    const ClockEvent& first = events[0][i];
    const ClockEvent& own = events[me][i];
    if (spans != nullptr && own.compute_before_s > 0) {
      spans->push_back({false, own.what, false, clock[me], clock[me] + compute(events, me, i)});
    }
    for (std::size_t r = 0; r < events.size(); ++r) clock[r] += compute(events, r, i);
    switch (first.kind) {
      case ClockEventKind::Blocking: {
        const double all_arrived = latest();
        double duration = first.seconds;
        if (!modelled) {
          for (const auto& rank_events : events) duration = std::max(duration, rank_events[i].seconds);
        }
        const double begins = modelled ? std::max(all_arrived, network_free_s_) : all_arrived;
        const double ends = begins + duration;
        if (modelled) network_free_s_ = ends;
        // Waiting behind collectives in flight counts as exposed: hidden loses what they gained.
        totals_.exposed_s += ends - all_arrived;
        totals_.hidden_s -= begins - all_arrived;  // the queue; 0 on an idle network
        if (spans != nullptr) spans->push_back({true, own.what, false, begins, ends});
        std::ranges::fill(clock, ends);
        break;
      }
      case ClockEventKind::Start: {
        const double all_started = latest();
        const double begins = modelled ? std::max(all_started, network_free_s_) : 0.0;
        const double ends = begins + first.seconds;
        if (modelled) network_free_s_ = ends;
        in_flight_[first.collective] = {all_started, begins, ends, first.seconds, clock[me]};
        break;
      }
      case ClockEventKind::Wait: {
        const auto found = in_flight_.find(first.collective);
        if (found == in_flight_.end()) {
          throw CommError(fmt::format("simulated clock: a wait for collective {}, which was never started",
                                      first.collective));
        }
        const InFlight flight = found->second;
        in_flight_.erase(found);
        for (std::size_t r = 0; r < events.size(); ++r) {
          double blocked = 0.0;
          if (modelled) {
            blocked = std::max(0.0, flight.ends_s - std::max(clock[r], flight.all_started_s));
            clock[r] = std::max(clock[r], flight.ends_s);
          } else {
            blocked = events[r][i].seconds;
            clock[r] += blocked;
          }
          if (r == me) {
            // Modelled: blocked may exceed d (the collective queued behind others); the
            // totals stay exposed + hidden = the durations. Measured: hidden is what the model
            // says the rank did not wait for.
            totals_.exposed_s += blocked;
            totals_.hidden_s += modelled ? flight.duration_s - blocked : std::max(0.0, flight.duration_s - blocked);
            if (spans != nullptr) {
              // Measured: from the rank's start to the end of its wait.
              spans->push_back(modelled ? ClockSpan{true, own.what, true, flight.begins_s, flight.ends_s}
                                        : ClockSpan{true, own.what, true, flight.started_s, clock[r]});
            }
          }
        }
        break;
      }
      case ClockEventKind::Settle: break;  // its compute is all it adds
    }
  }
  settled_s_ = latest();
}

}  // namespace lowcomm
