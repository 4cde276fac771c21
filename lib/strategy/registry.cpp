#include "lowcomm/strategy/registry.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <mutex>

#include "builtins.hpp"
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

void StrategyRegistry::add(StrategyInfo info) {
  const bool valid_name = !info.name.empty() && std::ranges::all_of(info.name, [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
  if (!valid_name) {
    throw Error(fmt::format("strategy name '{}' must be lower-case letters, digits and '_'", info.name));
  }
  if (!info.create) throw Error(fmt::format("strategy '{}' has no factory", info.name));
  if (std::ranges::find(strategies_, info.name, &StrategyInfo::name) != strategies_.end()) {
    throw Error(fmt::format("a strategy named '{}' is already registered", info.name));
  }
  strategies_.push_back(std::move(info));
}

const StrategyInfo& StrategyRegistry::find(std::string_view name) const {
  const auto found = std::ranges::find(strategies_, name, &StrategyInfo::name);
  if (found != strategies_.end()) return *found;
  std::vector<std::string_view> names;
  for (const StrategyInfo* info : all()) names.push_back(info->name);
  throw ConfigError(fmt::format("unknown strategy '{}': registered are {}", name, fmt::join(names, ", ")));
}

std::vector<const StrategyInfo*> StrategyRegistry::all() const {
  std::vector<const StrategyInfo*> sorted;
  for (const StrategyInfo& info : strategies_) sorted.push_back(&info);
  std::ranges::sort(sorted, {}, &StrategyInfo::name);
  return sorted;
}

void StrategyRegistry::add_config_keys(ConfigSchema& schema) const {
  std::vector<std::string> names;
  for (const StrategyInfo* info : all()) names.push_back(info->name);
  schema.string("strategy.name", "data_parallel", "how a step synchronises (lowcomm info lists them)", names);
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

void add_strategy_keys(ConfigSchema& schema, std::string_view default_optimizer) {
  StrategyRegistry::global().add_config_keys(schema);
  add_optimizer_keys(schema, "optimizer", default_optimizer);
  CompressorRegistry::global().add_config_keys(schema);
  add_compute_keys(schema);
}

RegisterStrategy::RegisterStrategy(StrategyInfo info) { StrategyRegistry::global().add(std::move(info)); }

void register_builtin_strategies(StrategyRegistry& registry) {
  registry.add(strategy::data_parallel_strategy());
  registry.add(strategy::demo_strategy());
  registry.add(strategy::diloco_strategy());
}

}  // namespace lowcomm
