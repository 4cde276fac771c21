#pragma once
// What network.mode does to a collective (NetworkMode, communicator.hpp), in one place: the
// modelled time it is charged, the clock's rule, and in throttle mode the real time it takes.
// The Communicator calls the hooks around each transfer; off and simulate never wait.
//
// Throttle: a collective cannot finish before its last rank has arrived, so a blocking one first
// waits for every rank (a barrier over the uncounted control channel) and counts its modelled
// time from there on every rank; without it, an early rank would overlap its wait for a late one
// with the modelled transfer and leave too soon. The links serve collectives one after another:
// each is released at max(its start, the end of the one before) + its modelled time, and the rank
// is held until then. A non-blocking one counts from this rank's start (a barrier would block).
#include <cstdint>

#include "lowcomm/comm/control_channel.hpp"
#include "lowcomm/comm/simulated_clock.hpp"

namespace lowcomm {

enum class NetworkMode : std::uint8_t {
  Off,       // no modelled time; the simulated clock is the wall clock
  Simulate,  // simulated clock = measured compute + modelled communication; nothing sleeps
  Throttle,  // each collective really takes its modelled time, counted from the last rank's
             // arrival (for overlap studies); the simulated clock is then the wall clock
};
std::string_view to_string(NetworkMode mode);
NetworkMode parse_network_mode(std::string_view name);  // "off", "simulate", "throttle"

// Seconds on the monotonic wall clock the Communicator measures with.
double wall_seconds();

// The simulated clock's rule in `mode`: collectives take their modelled time (simulate), or the
// wall clock's (off, throttle).
constexpr SimulatedClock::Rule clock_rule(NetworkMode mode) {
  return mode == NetworkMode::Simulate ? SimulatedClock::Rule::Modelled : SimulatedClock::Rule::Measured;
}

class NetworkPacing {
 public:
  NetworkPacing(NetworkMode mode, const ControlChannel& control) : mode_(mode), control_(control) {}

  NetworkMode mode() const { return mode_; }
  // The modelled seconds a call is charged: the model's, none where nothing is modelled (off).
  double charged(double modelled_s) const { return mode_ != NetworkMode::Off ? modelled_s : 0.0; }
  // A blocking call's duration on the simulated clock: modelled (simulate) or measured.
  double clock_seconds(double charged_s, double measured_s) const {
    return mode_ == NetworkMode::Simulate ? charged_s : measured_s;
  }

  // A blocking call, once this rank has arrived: returns when its last rank had (throttle waits
  // for them; otherwise now).
  double all_arrived();
  // Its transfer ended at `end`: throttle holds the rank until the links release it; returns when
  // the call ends.
  double after_blocking(double all_arrived, double charged_s, double end);

  // A non-blocking call started at `arrival`: reserves the links (throttle) and returns when its
  // modelled transfer ends; `cancel` gives the reservation back when the transfer cannot start.
  struct Reservation {
    double release = 0.0;
    double links_free_before = 0.0;
  };
  Reservation reserve(double arrival, double modelled_s);
  void cancel(const Reservation& reservation) { links_free_ = reservation.links_free_before; }
  // Its transfer completed: throttle holds the rank until `release`.
  void hold_until(double release) const;

 private:
  NetworkMode mode_;
  const ControlChannel& control_;
  double links_free_ = 0.0;  // throttle: wall time when the modelled links are free
};

}  // namespace lowcomm
