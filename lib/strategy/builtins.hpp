#pragma once
// The strategies that ship with lowcomm, one source file each.
#include "lowcomm/config/options_schema.hpp"
#include "lowcomm/core/timing.hpp"
#include "lowcomm/strategy/registry.hpp"

namespace lowcomm::strategy {

StrategyInfo data_parallel_strategy();  // data_parallel.cpp
StrategyInfo demo_strategy();           // demo.cpp
StrategyInfo diloco_strategy();         // diloco.cpp
StrategyInfo desloc_strategy();         // desloc.cpp
StrategyInfo noloco_strategy();         // noloco.cpp
StrategyInfo onebit_adam_strategy();    // onebit_adam.cpp
StrategyInfo zero_one_adam_strategy();  // zero_one_adam.cpp

}  // namespace lowcomm::strategy
