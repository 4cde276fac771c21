#include "lowcomm/strategy/registry.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <mutex>

#include "builtin/builtins.hpp"
#include "lowcomm/compress/registry.hpp"
#include "lowcomm/config/compute_config.hpp"
#include "lowcomm/error.hpp"
#include "lowcomm/optim/registry.hpp"

namespace lowcomm {

StrategyRegistry& StrategyRegistry::global() {
  static StrategyRegistry registry;
  static std::once_flag builtins;
  std::call_once(builtins, [] { register_builtin_strategies(registry); });
  return registry;
}

void StrategyRegistry::add_config_keys(ConfigSchema& schema) const {
  schema.string("strategy.name", "data_parallel", "how a step synchronises (lowcomm info lists them)", names());
  for (const StrategyInfo* info : all()) {
    for (ConfigKey key : info->parameters) {
      key.path = fmt::format("strategy.{}.{}", info->name, key.path);
      schema.add(std::move(key));
    }
  }
}

std::unique_ptr<Strategy> StrategyRegistry::create(const StrategySetup& setup) const {
  return find(setup.config.get_string("strategy.name")).create(setup);
}

std::string StrategyRegistry::transport(const Config& config) const {
  const StrategyInfo& info = find(config.get_string("strategy.name"));
  return info.transport ? info.transport(config) : compressor_selection(config).name;
}

void add_strategy_keys(ConfigSchema& schema, std::string_view default_optimizer) {
  StrategyRegistry::global().add_config_keys(schema);
  add_optimizer_keys(schema, "optimizer", default_optimizer);
  CompressorRegistry::global().add_config_keys(schema);
  add_compute_keys(schema);
}

RegisterStrategy::RegisterStrategy(StrategyInfo info) {
  register_statically(StrategyRegistry::global(), std::move(info));
}

// One per builtin/<name>.cpp, found by the build (cmake/LowcommBuiltins.cmake).
void register_builtin_strategies(StrategyRegistry& registry) {
#define LOWCOMM_BUILTIN(name) registry.add(strategy::name##_strategy());
#include "builtin_strategies.inc"
#undef LOWCOMM_BUILTIN
}

}  // namespace lowcomm
