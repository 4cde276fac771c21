// The resolved configuration as text: what the run log records and what ranks compare by hash.
// Its bytes are a function of the values alone (fixed order, locale-free number formatting), so
// equal configurations hash equally on every machine.
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

std::string Config::to_toml() const {
  // One TOML table per parent path, top-level keys first; paths were checked to be bare keys,
  // so no quoting is needed, and the schema forbids a path that is both a value and a table.
  std::map<std::string, std::vector<std::pair<std::string, const ConfigValue*>>, PathLess> tables;
  for (const auto& [path, value] : values_) {
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

std::uint64_t Config::hash() const {
  std::uint64_t hash = 0xcbf29ce484222325ULL;  // FNV-1a 64 offset basis and prime
  for (const char c : to_toml()) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

}  // namespace lowcomm
