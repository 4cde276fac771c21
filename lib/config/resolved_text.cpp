// The resolved configuration as text: what the run log records and what ranks compare by hash.
// Its bytes are a function of the values alone (fixed order, locale-free number formatting), so
// equal configurations hash equally on every machine.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <utility>

#include "lowcomm/config/config.hpp"
#include "path.hpp"
#include "value_text.hpp"

namespace lowcomm {

using namespace config_detail;

namespace {

struct PathLess {
  bool operator()(const std::string& a, const std::string& b) const { return path_less(a, b); }
};

}  // namespace

namespace {

using Values = std::map<std::string, ConfigValue, std::less<>>;

// One TOML table per parent path, top-level keys first; paths were checked to be bare keys, so no
// quoting is needed, and the schema forbids a path that is both a value and a table.
std::string toml_of(const Values& values) {
  std::map<std::string, std::vector<std::pair<std::string, const ConfigValue*>>, PathLess> tables;
  for (const auto& [path, value] : values) {
    const std::size_t dot = path.rfind('.');
    const std::string parent = dot == std::string::npos ? std::string() : path.substr(0, dot);
    tables[parent].emplace_back(path.substr(dot + 1), &value);
  }
  std::string text;
  for (auto& [parent, entries] : tables) {
    std::sort(entries.begin(), entries.end(),
              [](const auto& a, const auto& b) { return path_less(a.first, b.first); });
    if (!parent.empty()) text += (text.empty() ? "[" : "\n[") + parent + "]\n";
    for (const auto& [name, value] : entries) text += name + " = " + toml_literal(*value) + "\n";
  }
  return text;
}

std::uint64_t fnv1a(std::string_view text) {
  std::uint64_t hash = 0xcbf29ce484222325ULL;  // FNV-1a 64 offset basis and prime
  for (const char c : text) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

}  // namespace

std::string Config::to_toml() const { return toml_of(values_); }

std::uint64_t Config::hash() const { return fnv1a(to_toml()); }

std::vector<std::string> Config::changes_since(const Config& earlier) const {
  std::vector<std::string> changes;
  const auto text = [](const Values& values, const std::string& path) {
    const auto found = values.find(path);
    return found == values.end() ? std::string("unset") : value_text(found->second);
  };
  Values both = values_;
  both.insert(earlier.values_.begin(), earlier.values_.end());  // every path of either, once
  for (const auto& [path, unused] : both) {
    const std::string now = text(values_, path), before = text(earlier.values_, path);
    if (now != before) changes.push_back(fmt::format("{} = {} (was {})", path, now, before));
  }
  return changes;
}

std::uint64_t Config::hash_of_changes() const {
  Values changed;
  for (const auto& [path, value] : values_) {
    const ConfigKey* key = schema_.resolve(path);
    if (key == nullptr || !key->default_value || *key->default_value != value) changed.emplace(path, value);
  }
  return fnv1a(toml_of(changed));
}

}  // namespace lowcomm
