#pragma once
// The Communicator's metering layer: around each transfer its transport makes, the network mode's
// pacing (network_pacing.hpp), the call on the run's simulated clock (run_clock.hpp), its counters
// and record (comm_counters.hpp) and its spans on the timeline. The Communicator checks and prices
// a call (collective_pricing.hpp) and hands the transfer to this; a non-blocking transfer stays
// here, numbered as the clock numbers collectives, until it is waited for.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>

#include "collective_transport.hpp"
#include "lowcomm/comm/collective_pricing.hpp"
#include "lowcomm/comm/comm_counters.hpp"
#include "lowcomm/comm/network_pacing.hpp"
#include "lowcomm/comm/run_clock.hpp"

namespace lowcomm {

class MeteredCalls {
 public:
  MeteredCalls(NetworkMode mode, bool keep_records, const ControlChannel& control, RunClock& clock)
      : pacing_(mode, control), meter_(keep_records), clock_(clock) {}
  MeteredCalls(const MeteredCalls&) = delete;
  MeteredCalls& operator=(const MeteredCalls&) = delete;

  // A blocking call: `price()` gives its RankCost (the model's own time is not the caller's
  // compute, so it runs after the call's arrival), `transfer()` moves the data.
  template <class Price, class Transfer>
  void blocking(CollectiveKind kind, std::uint64_t payload_bytes, Price&& price, Transfer&& transfer) {
    const double arrival = wall_seconds();
    const double all_arrived = pacing_.all_arrived();  // throttle waits for every rank
    const RankCost cost = price();
    transfer();
    finish_blocking(kind, payload_bytes, cost, arrival, all_arrived);
  }

  // A non-blocking call: `issue()` starts the transport's transfer and returns it; `finish` runs
  // once it has completed (the average's division). Returns the call's number for test and wait.
  template <class Issue>
  std::uint64_t start(CollectiveKind kind, std::uint64_t payload_bytes, const RankCost& cost,
                      std::function<void()> finish, Issue&& issue) {
    const std::uint64_t id = open(kind, payload_bytes, cost, std::move(finish));
    try {
      in_flight_.at(id).transfer = issue();
    } catch (...) {
      close_unstarted(id);
      throw;
    }
    started(id);
    return id;
  }
  bool test(std::uint64_t id) { return in_flight_.at(id).transfer->test(); }
  void wait(std::uint64_t id);
  void progress();  // every transfer in flight tested
  // Completes every transfer in flight, before the transport goes (destroying one waits for it).
  void abandon() { in_flight_.clear(); }

  const CallMeter& meter() const { return meter_; }
  CallMeter& meter() { return meter_; }

 private:
  void finish_blocking(CollectiveKind kind, std::uint64_t payload_bytes, const RankCost& cost, double arrival,
                       double all_arrived);
  void record(CollectiveKind kind, std::uint64_t payload_bytes, const RankCost& cost, double measured_s);
  // start's steps around the transport's: a number and the links reserved; their release where
  // the transfer could not start; the clock and the counters once it has.
  std::uint64_t open(CollectiveKind kind, std::uint64_t payload_bytes, const RankCost& cost,
                     std::function<void()> finish);
  void close_unstarted(std::uint64_t id);
  void started(std::uint64_t id);

  struct InFlight {
    std::unique_ptr<TransferInFlight> transfer;
    CollectiveKind kind = CollectiveKind::AllReduce;
    std::uint64_t payload_bytes = 0;
    RankCost cost{};
    double started = 0.0;              // wall time at the start call
    NetworkPacing::Reservation links;  // throttle: when its modelled transfer ends (after the queue)
    std::function<void()> finish;
  };

  NetworkPacing pacing_;
  CallMeter meter_;
  RunClock& clock_;
  std::uint64_t next_collective_ = 0;  // the clock's collective numbers
  std::map<std::uint64_t, InFlight> in_flight_;
};

}  // namespace lowcomm
