#pragma once
// What the benchmarks report as a collective's or a step's time: the slowest rank's, since the
// others wait for it.
#include "lowcomm/comm/control_channel.hpp"

namespace lowcomm::cli {

inline double slowest_rank(const ControlChannel& control, double seconds) { return control.max(seconds); }

}  // namespace lowcomm::cli
