#pragma once
// A non-blocking collective in flight: what Communicator::start_all_reduce and the other start_*
// calls return (communicator.hpp).
#include <cstdint>

namespace lowcomm {

class Communicator;

// A non-blocking collective in flight, returned by Communicator::start_*. Its buffers must stay
// untouched until wait() returns. wait() is collective in the sense that every rank must wait for
// its collectives in the same order (the simulated clock checks it). Move-only; destroying one
// still in flight waits for it (errors swallowed). It must not outlive its Communicator.
class PendingCollective {
 public:
  PendingCollective() = default;
  PendingCollective(PendingCollective&& other) noexcept;
  PendingCollective& operator=(PendingCollective&& other) noexcept;
  PendingCollective(const PendingCollective&) = delete;
  PendingCollective& operator=(const PendingCollective&) = delete;
  ~PendingCollective();

  bool active() const { return comm_ != nullptr; }
  // Lets MPI progress the collective; true once it has completed (wait() then returns at once,
  // apart from throttle mode's hold). Not a clock event: call it as often as convenient.
  bool test();
  // Blocks until the collective has completed (in throttle mode, also until its modelled time
  // since the start has passed), then finishes it (ReduceOp::Average divides here).
  void wait();

 private:
  friend class Communicator;
  PendingCollective(Communicator* comm, std::uint64_t id) : comm_(comm), id_(id) {}
  Communicator* comm_ = nullptr;
  std::uint64_t id_ = 0;
};

}  // namespace lowcomm
