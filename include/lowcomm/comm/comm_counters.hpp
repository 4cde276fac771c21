#pragma once
// What a rank's Communicator counts of its collectives (the metering layer, with
// collective_pricing.hpp): running totals, by kind, and where asked for, one record per call.
#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "lowcomm/comm/collective.hpp"

namespace lowcomm {

// Running totals of a rank's collectives. Subtract two snapshots to get one step's share. A
// non-blocking collective counts its bytes and modelled time when it starts, its call and
// measured time (the time the rank was blocked in wait()) when it completes.
struct CommCounters {
  std::uint64_t calls = 0;
  std::uint64_t bytes_sent = 0;
  std::uint64_t bytes_received = 0;
  double measured_s = 0.0;  // wall time inside the calls, from the last rank's arrival in throttle mode
  double modelled_s = 0.0;

  CommCounters& operator+=(const CommCounters& other);
  friend CommCounters operator-(CommCounters a, const CommCounters& b);
};

// One collective as this rank saw it (kept only when CommunicatorOptions::keep_records is set).
struct CollectiveRecord {
  CollectiveKind kind;
  std::uint64_t payload_bytes;  // this rank's input: the buffer reduced, its block gathered, ...
  std::uint64_t bytes_sent;
  std::uint64_t bytes_received;
  double measured_s;
  double modelled_s;
};

class CallMeter {
 public:
  explicit CallMeter(bool keep_records) : keep_records_(keep_records) {}

  void count(CollectiveKind kind, const CommCounters& call) {
    totals_ += call;
    by_kind_[static_cast<int>(kind)] += call;
  }
  void record(const CollectiveRecord& call) {
    if (keep_records_) records_.push_back(call);
  }

  const CommCounters& totals() const { return totals_; }
  const CommCounters& totals(CollectiveKind kind) const { return by_kind_[static_cast<int>(kind)]; }
  std::span<const CollectiveRecord> records() const { return records_; }
  void clear_records() { records_.clear(); }

 private:
  bool keep_records_;
  CommCounters totals_;
  std::array<CommCounters, kCollectiveKinds> by_kind_{};
  std::vector<CollectiveRecord> records_;
};

}  // namespace lowcomm
