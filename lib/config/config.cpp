// Reading a resolved Config. Asking for a key the schema does not have, or with the wrong type,
// is a programming error: lowcomm::Error, naming the path.
#include "lowcomm/config/config.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "lowcomm/error.hpp"
#include "path.hpp"
#include "value_text.hpp"

namespace lowcomm {

using namespace config_detail;

namespace {

template <typename T>
const T& typed(const ConfigValue& value, std::string_view path, ValueType wanted) {
  if (const T* typed_value = std::get_if<T>(&value)) return *typed_value;
  throw Error(fmt::format("config key '{}' holds {}, not {}", path,
                          type_description(type_of(value)), type_description(wanted)));
}

}  // namespace

Config::Config(ConfigSchema schema, std::map<std::string, ConfigValue, std::less<>> values)
    : schema_(std::move(schema)), values_(std::move(values)) {}

const ConfigValue& Config::value_of(std::string_view path) const {
  if (auto it = values_.find(path); it != values_.end()) return it->second;
  if (const ConfigKey* named = schema_.find(path); named && !named->alias_of.empty()) {
    return value_of(named->alias_of);
  }
  const ConfigKey* key = schema_.find(path);
  // Only wildcard and optional keys can be unset here; the others were filled or required.
  if (key && key->default_value) return *key->default_value;
  throw Error(key ? fmt::format("config key '{}' is not set (check has() first)", path)
                  : fmt::format("unknown config key '{}'", path));
}

bool Config::has(std::string_view path) const {
  if (values_.contains(path)) return true;
  if (const ConfigKey* named = schema_.find(path); named && !named->alias_of.empty()) return has(named->alias_of);
  const ConfigKey* key = schema_.find(path);
  return key && key->default_value;
}

bool Config::get_bool(std::string_view path) const {
  return typed<bool>(value_of(path), path, ValueType::Boolean);
}

std::int64_t Config::get_int(std::string_view path) const {
  return typed<std::int64_t>(value_of(path), path, ValueType::Integer);
}

double Config::get_double(std::string_view path) const {
  return typed<double>(value_of(path), path, ValueType::Float);
}

const std::string& Config::get_string(std::string_view path) const {
  return typed<std::string>(value_of(path), path, ValueType::String);
}

std::vector<std::string> Config::instances(std::string_view wildcard_path) const {
  const auto keys = schema_.keys();
  const auto key = std::find_if(keys.begin(), keys.end(),
                                [&](const ConfigKey* k) { return k->path == wildcard_path; });
  if (key == keys.end()) {
    throw Error(fmt::format("'{}' is not a config key of the schema", wildcard_path));
  }
  std::vector<std::string> paths;
  for (const auto& [path, value] : values_) {
    if (schema_.find(path) == *key) paths.push_back(path);
  }
  std::sort(paths.begin(), paths.end(), path_less);
  return paths;
}

}  // namespace lowcomm
