// ConfigSchema: the keys a configuration may hold. Its checks throw lowcomm::Error, not
// ConfigError: a bad schema is the programmer's mistake, not the researcher's.
#include <fmt/format.h>

#include <algorithm>

#include "lowcomm/config/config.hpp"
#include "lowcomm/error.hpp"
#include "path.hpp"
#include "value_check.hpp"
#include "value_text.hpp"

namespace lowcomm {

using namespace config_detail;

namespace {

void check_path(std::string_view path) {
  const auto segments = split_path(path);
  const bool valid = std::all_of(segments.begin(), segments.end(), [](std::string_view s) {
    return s == "*" || is_bare_segment(s);
  });
  if (!valid) {
    throw Error(fmt::format("config key '{}': a path is segments of [A-Za-z0-9_-] or '*' "
                            "separated by '.'",
                            path));
  }
}

void check_constraints(const ConfigKey& key) {
  const bool numeric = key.type == ValueType::Integer || key.type == ValueType::Float;
  if ((key.min || key.max) && !numeric) {
    throw Error(fmt::format("config key '{}': only numeric keys can have bounds", key.path));
  }
  if (key.min && key.max && *key.min > *key.max) {
    throw Error(fmt::format("config key '{}': min {} is above max {}", key.path,
                            number_text(*key.min), number_text(*key.max)));
  }
  if (!key.choices.empty() && key.type != ValueType::String) {
    throw Error(fmt::format("config key '{}': only string keys can have choices", key.path));
  }
}

// An integer default for a Float key is the same number; anything else of the wrong type is a
// mistake in the schema.
void normalise_default(ConfigKey& key) {
  if (!key.default_value) return;
  if (key.type == ValueType::Float && type_of(*key.default_value) == ValueType::Integer) {
    key.default_value = static_cast<double>(std::get<std::int64_t>(*key.default_value));
  }
  if (type_of(*key.default_value) != key.type) {
    throw Error(fmt::format("config key '{}': default {} is not {}", key.path,
                            toml_literal(*key.default_value), type_description(key.type)));
  }
  if (auto violation = constraint_violation(key, key.path, *key.default_value)) {
    throw Error(fmt::format("config key '{}': invalid default: {}", key.path, *violation));
  }
}

}  // namespace

ConfigSchema& ConfigSchema::add(ConfigKey key) {
  check_path(key.path);
  if (keys_.contains(key.path)) {
    throw Error(fmt::format("config key '{}' is defined twice", key.path));
  }
  // A path that is a value cannot also be a table: TOML could not write both.
  for (const auto& [path, existing] : keys_) {
    if (overlaps(path, key.path) && split_path(path).size() != split_path(key.path).size()) {
      throw Error(fmt::format("config keys '{}' and '{}' conflict: one would be a value and "
                              "a table at once",
                              path, key.path));
    }
  }
  if (!key.alias_of.empty()) {
    check_path(key.alias_of);
    if (key.default_value || key.min || key.max || !key.choices.empty() || key.optional) {
      throw Error(fmt::format("config key '{}' is an alias of '{}': it takes no default, bounds, choices or "
                              "optional of its own", key.path, key.alias_of));
    }
  }
  check_constraints(key);
  normalise_default(key);
  std::string path = key.path;
  keys_.emplace(std::move(path), std::move(key));
  return *this;
}

ConfigSchema& ConfigSchema::boolean(std::string path, bool def, std::string description) {
  return add({.path = std::move(path), .type = ValueType::Boolean, .default_value = def,
              .description = std::move(description)});
}

ConfigSchema& ConfigSchema::integer(std::string path, std::int64_t def, std::string description,
                                    std::optional<double> min, std::optional<double> max) {
  return add({.path = std::move(path), .type = ValueType::Integer, .default_value = def,
              .description = std::move(description), .min = min, .max = max});
}

ConfigSchema& ConfigSchema::real(std::string path, double def, std::string description,
                                 std::optional<double> min, std::optional<double> max) {
  return add({.path = std::move(path), .type = ValueType::Float, .default_value = def,
              .description = std::move(description), .min = min, .max = max});
}

ConfigSchema& ConfigSchema::string(std::string path, std::string def, std::string description,
                                   std::vector<std::string> choices) {
  return add({.path = std::move(path), .type = ValueType::String,
              .default_value = std::move(def), .description = std::move(description),
              .choices = std::move(choices)});
}

const ConfigKey* ConfigSchema::find(std::string_view concrete_path) const {
  if (!is_concrete_path(concrete_path)) return nullptr;
  if (auto it = keys_.find(concrete_path); it != keys_.end()) return &it->second;
  // The most specific wildcard key wins, e.g. "a.*.x" over "*.*.x".
  const ConfigKey* best = nullptr;
  for (const auto& [path, key] : keys_) {
    if (matches(path, concrete_path) &&
        (!best || wildcard_count(path) < wildcard_count(best->path))) {
      best = &key;
    }
  }
  return best;
}

const ConfigKey* ConfigSchema::resolve(std::string_view concrete_path) const {
  const ConfigKey* key = find(concrete_path);
  if (key == nullptr || key->alias_of.empty()) return key;
  const ConfigKey* target = find(key->alias_of);
  if (target == nullptr || !target->alias_of.empty()) {
    throw Error(fmt::format("config key '{}' is an alias of '{}', which is not a key", key->path, key->alias_of));
  }
  return target;
}

std::vector<const ConfigKey*> ConfigSchema::keys() const {
  std::vector<const ConfigKey*> sorted;
  sorted.reserve(keys_.size());
  for (const auto& [path, key] : keys_) sorted.push_back(&key);
  return sorted;
}

}  // namespace lowcomm
