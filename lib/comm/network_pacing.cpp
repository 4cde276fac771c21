#include "lowcomm/comm/network_pacing.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "lowcomm/error.hpp"

namespace lowcomm {

std::string_view to_string(NetworkMode mode) {
  switch (mode) {
    case NetworkMode::Off: return "off";
    case NetworkMode::Simulate: return "simulate";
    case NetworkMode::Throttle: return "throttle";
  }
  return "?";
}

NetworkMode parse_network_mode(std::string_view name) {
  for (auto m : {NetworkMode::Off, NetworkMode::Simulate, NetworkMode::Throttle}) {
    if (to_string(m) == name) return m;
  }
  throw ConfigError(fmt::format("unknown network mode '{}': use off, simulate or throttle", name));
}

double wall_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double NetworkPacing::all_arrived() {
  if (mode_ == NetworkMode::Throttle) control_.barrier();
  return wall_seconds();
}

double NetworkPacing::after_blocking(double all_arrived, double charged_s, double end) {
  if (mode_ != NetworkMode::Throttle) return end;
  const double release = std::max(all_arrived, links_free_) + charged_s;
  links_free_ = release;
  if (end >= release) return end;
  std::this_thread::sleep_for(std::chrono::duration<double>(release - end));
  return wall_seconds();
}

NetworkPacing::Reservation NetworkPacing::reserve(double arrival, double modelled_s) {
  Reservation reservation{.release = 0.0, .links_free_before = links_free_};
  if (mode_ == NetworkMode::Throttle) {  // served after the collectives before it
    reservation.release = std::max(arrival, links_free_) + modelled_s;
    links_free_ = reservation.release;
  }
  return reservation;
}

void NetworkPacing::hold_until(double release) const {
  if (mode_ != NetworkMode::Throttle) return;
  if (const double left = release - wall_seconds(); left > 0) {
    std::this_thread::sleep_for(std::chrono::duration<double>(left));
  }
}

}  // namespace lowcomm
