#include "lowcomm/config/component_parameters.hpp"

#include <fmt/format.h>

#include "lowcomm/error.hpp"

namespace lowcomm {

ComponentParameters::ComponentParameters(const Config& config, std::string prefix)
    : config_(config), prefix_(std::move(prefix)) {}

std::string ComponentParameters::key(std::string_view name) const { return fmt::format("{}.{}", prefix_, name); }

bool ComponentParameters::has(std::string_view name) const { return config_.has(key(name)); }
bool ComponentParameters::get_bool(std::string_view name) const { return config_.get_bool(key(name)); }
std::int64_t ComponentParameters::get_int(std::string_view name) const { return config_.get_int(key(name)); }
double ComponentParameters::get_double(std::string_view name) const { return config_.get_double(key(name)); }
const std::string& ComponentParameters::get_string(std::string_view name) const {
  return config_.get_string(key(name));
}

void ComponentParameters::reject(std::string_view name, std::string_view why) const {
  throw ConfigError(fmt::format("'{}': {}", key(name), why));
}

}  // namespace lowcomm
