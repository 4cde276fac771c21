#include "metered_calls.hpp"

#include <fmt/format.h>

#include <string>
#include <utility>

#include "lowcomm/core/timeline.hpp"
#include "lowcomm/error.hpp"

namespace lowcomm {

void MeteredCalls::record(CollectiveKind kind, std::uint64_t payload_bytes, const RankCost& cost, double measured_s) {
  meter_.record({kind, payload_bytes, cost.bytes_sent, cost.bytes_received, measured_s, pacing_.charged(cost.seconds)});
}

void MeteredCalls::finish_blocking(CollectiveKind kind, std::uint64_t payload_bytes, const RankCost& cost,
                                   double arrival, double all_arrived) {
  const double modelled_s = pacing_.charged(cost.seconds);
  const double end = pacing_.after_blocking(all_arrived, modelled_s, wall_seconds());
  const double measured_s = end - all_arrived;
  // Throttle: the real time is the communication time (at least the modelled one).
  clock_.record(ClockEventKind::Blocking, next_collective_++, kind, arrival,
                pacing_.clock_seconds(modelled_s, measured_s));
  if (Timeline& timeline = Timeline::global(); timeline.enabled()) {
    timeline.record("network", to_string(kind), timeline.since_start(arrival), timeline.since_start(end));
  }
  meter_.count(kind, {1, cost.bytes_sent, cost.bytes_received, measured_s, modelled_s});
  record(kind, payload_bytes, cost, measured_s);
  clock_.returned(wall_seconds());
}

std::uint64_t MeteredCalls::open(CollectiveKind kind, std::uint64_t payload_bytes, const RankCost& cost,
                                 std::function<void()> finish) {
  const double arrival = wall_seconds();
  const std::uint64_t id = next_collective_++;
  InFlight& call = in_flight_[id];
  call.kind = kind;
  call.payload_bytes = payload_bytes;
  call.cost = cost;
  call.started = arrival;
  call.links = pacing_.reserve(arrival, cost.seconds);
  call.finish = std::move(finish);
  return id;
}

void MeteredCalls::close_unstarted(std::uint64_t id) {
  pacing_.cancel(in_flight_.at(id).links);
  in_flight_.erase(id);
  next_collective_ = id;
}

void MeteredCalls::started(std::uint64_t id) {
  // The bytes are counted now; the measured time when it is waited for. The call itself is
  // counted as compute (it only posts the collective).
  const InFlight& call = in_flight_.at(id);
  const double modelled_s = pacing_.charged(call.cost.seconds);
  clock_.record(ClockEventKind::Start, id, call.kind, call.started, modelled_s);
  clock_.returned(call.started);
  meter_.count(call.kind, {0, call.cost.bytes_sent, call.cost.bytes_received, 0.0, modelled_s});
}

void MeteredCalls::progress() {
  for (const auto& [id, call] : in_flight_) call.transfer->test();
}

void MeteredCalls::wait(std::uint64_t id) {
  const auto found = in_flight_.find(id);
  if (found == in_flight_.end()) throw CommError(fmt::format("wait: collective {} is not in flight", id));
  InFlight call = std::move(found->second);
  in_flight_.erase(found);
  const double entry = wall_seconds();
  call.transfer->wait();
  pacing_.hold_until(call.links.release);
  const double exit = wall_seconds();
  const double blocked = exit - entry;
  if (call.finish) call.finish();
  clock_.record(ClockEventKind::Wait, id, call.kind, entry, blocked);
  if (Timeline& timeline = Timeline::global(); timeline.enabled()) {
    timeline.record("network (in flight)", to_string(call.kind), timeline.since_start(call.started),
                    timeline.since_start(exit));
    timeline.record("network", "wait " + std::string(to_string(call.kind)), timeline.since_start(entry),
                    timeline.since_start(exit));
  }
  // The call counts once it has completed; its bytes and modelled time were counted at the start.
  meter_.count(call.kind, {1, 0, 0, blocked, 0.0});
  record(call.kind, call.payload_bytes, call.cost, blocked);
  clock_.returned(wall_seconds());
}

}  // namespace lowcomm
