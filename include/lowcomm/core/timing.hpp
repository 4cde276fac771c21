#pragma once
// Measured time for reports and logs: a monotonic clock, in seconds.
#include <chrono>

namespace lowcomm {

using SteadyClock = std::chrono::steady_clock;

inline double seconds_since(SteadyClock::time_point start) {
  return std::chrono::duration<double>(SteadyClock::now() - start).count();
}

}  // namespace lowcomm
