#pragma once
// What a built-in strategy's source includes, and the description of every built-in,
// `StrategyInfo <name>_strategy()` for each builtin/<name>.cpp (the build lists them:
// builtin_strategies.inc).
#include "lowcomm/config/options_schema.hpp"
#include "lowcomm/core/timing.hpp"
#include "lowcomm/strategy/registry.hpp"

namespace lowcomm::strategy {

#define LOWCOMM_BUILTIN(name) StrategyInfo name##_strategy();
#include "builtin_strategies.inc"
#undef LOWCOMM_BUILTIN

}  // namespace lowcomm::strategy
