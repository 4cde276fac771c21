#pragma once
// The strategies that ship with lowcomm, one source file each.
#include <chrono>

#include "lowcomm/strategy/registry.hpp"

namespace lowcomm::strategy {

StrategyInfo data_parallel_strategy();  // data_parallel.cpp
StrategyInfo demo_strategy();           // demo.cpp
StrategyInfo diloco_strategy();         // diloco.cpp

// Seconds since `start`, for the reports.
double seconds_since(std::chrono::steady_clock::time_point start);

}  // namespace lowcomm::strategy
