// Loading a configuration: TOML text and --set overrides are gathered into one value per key
// (a later source beats an earlier one), then each value is checked against its key and the
// defaults are filled. Every problem is collected, so that one run shows all there is to fix.
#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <deque>
#include <set>
#include <fstream>
#include <sstream>

#include "lowcomm/config/config.hpp"
#include "lowcomm/error.hpp"
#include "path.hpp"
#include "suggest.hpp"
#include "value_check.hpp"
#include "value_text.hpp"

namespace lowcomm {

using namespace config_detail;

namespace {

constexpr std::string_view command_line_source = "--set";

std::string_view trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

class Resolver {
 public:
  explicit Resolver(const ConfigSchema& schema) : schema_(schema), keys_(schema.keys()) {}

  void add_document(const toml::table& document, std::string_view source) {
    for (const auto& [name, node] : document) walk(node, {}, name.str(), source);
  }

  // One "section.key=value"; `source` names where it came from in messages ("--set", or an
  // experiment file's settings).
  void add_override(std::string_view assignment, std::string_view source) {
    override_sources_.emplace(source);
    const std::string_view form = source == command_line_source ? "--set section.key=value" : "section.key=value";
    const std::size_t equals = assignment.find('=');
    const std::string_view path = trim(assignment.substr(0, equals));
    if (equals == std::string_view::npos || path.empty()) {
      error(source, fmt::format("'{}' is not of the form {}", assignment, form));
      return;
    }
    if (!is_concrete_path(path)) {
      error(source, fmt::format("'{}' is not a key: write {}, with segments of letters, digits, '_' and '-' "
                                "separated by '.'",
                                path, form));
      return;
    }
    const std::size_t last_dot = path.rfind('.');
    const std::string_view parent =
        last_dot == std::string_view::npos ? "" : path.substr(0, last_dot);
    walk(override_value(trim(assignment.substr(equals + 1))), parent, path.substr(last_dot + 1), source);
  }

  std::map<std::string, ConfigValue, std::less<>> resolve(std::string_view main_source) {
    std::map<std::string, ConfigValue, std::less<>> values;
    for (const auto& [path, entry] : entries_) {
      const bool from_command_line = override_sources_.contains(entry.source);
      auto value = read_value(*schema_.resolve(path), entry.spelling, *entry.node, from_command_line);
      if (auto* message = std::get_if<std::string>(&value)) {
        error(entry.source, std::move(*message));
      } else {
        values.emplace(path, std::get<ConfigValue>(std::move(value)));
      }
    }
    for (const ConfigKey* key : keys_) {
      if (!key->alias_of.empty() || has_wildcard(key->path) || entries_.contains(key->path)) continue;
      if (key->default_value) {
        values.emplace(key->path, *key->default_value);
      } else if (!key->optional) {
        const std::string what = key->description.empty() ? "" : " (" + key->description + ")";
        error(main_source, fmt::format("missing required key '{}'{}: set it in the config file "
                                       "or with --set {}=<value>",
                                       key->path, what, key->path));
      }
    }
    return values;
  }

  void error(std::string_view source, std::string message) {
    errors_.push_back(fmt::format("{}: {}", source, message));
  }

  void throw_if_errors() const {
    if (errors_.empty()) return;
    std::string text;
    for (const std::string& line : errors_) text += (text.empty() ? "" : "\n") + line;
    throw ConfigError(text);
  }

 private:
  struct Entry {
    const toml::node* node;
    std::string source;
    std::string spelling;  // the name it was set by: the key's own or an alias
  };

  // The value of --set as TOML ("5", "true", "[1, 2]", "\"text\""), or as a plain string when
  // it is not TOML (consumer, 1.2.3), so that the common case needs no shell quoting.
  const toml::node& override_value(std::string_view text) {
    toml::table& holder = override_holders_.emplace_back();
    try {
      toml::table parsed = toml::parse(fmt::format("value = {}", text));
      // More than one entry means the text smuggled in a newline and another key.
      if (parsed.size() == 1 && parsed.contains("value")) holder = std::move(parsed);
    } catch (const toml::parse_error&) {
    }
    if (holder.empty()) holder.insert("value", std::string(text));
    return *holder.get("value");
  }

  // Records the value at `parent.name`, descending into tables the schema knows. Values are
  // only recorded here; their types are checked in resolve(), once overrides have replaced them.
  void walk(const toml::node& node, std::string_view parent, std::string_view name,
            std::string_view source) {
    const std::string path =
        parent.empty() ? std::string(name) : fmt::format("{}.{}", parent, name);
    if (!is_bare_segment(name)) {
      // A quoted TOML key such as "a.b" would be mistaken for a dotted path: no key has one.
      const std::string quoted = fmt::format("\"{}\"", name);
      error(source, fmt::format("unknown key '{}'",
                                parent.empty() ? quoted : fmt::format("{}.{}", parent, quoted)));
      return;
    }
    if (const ConfigKey* key = schema_.find(path)) {
      // An alias sets the key it names; a later source beats an earlier one, but one source
      // giving both names is a contradiction (or a redundancy) to point out.
      const std::string target = key->alias_of.empty() ? path : key->alias_of;
      schema_.resolve(path);  // a dangling alias is the schema's mistake: lowcomm::Error
      if (const auto set = entries_.find(target);
          set != entries_.end() && set->second.source == source && set->second.spelling != path) {
        error(source, fmt::format("'{}' and '{}' name one setting: set only one of them", set->second.spelling, path));
        return;
      }
      entries_.insert_or_assign(target, Entry{&node, std::string(source), path});
      return;
    }
    std::vector<std::string> keys_below;
    for (const ConfigKey* key : keys_) {
      if (is_table_of(key->path, path)) keys_below.push_back(instantiate(key->path, path));
    }
    if (!keys_below.empty()) {
      if (const auto* table = node.as_table()) {
        for (const auto& [child, child_node] : *table) walk(child_node, path, child.str(), source);
      } else {
        // A plain key makes a better example than a wildcard pattern.
        const auto example = std::find_if(keys_below.begin(), keys_below.end(),
                                          [](const std::string& k) { return !has_wildcard(k); });
        error(source, fmt::format("'{}' is a table, not a value: set its keys, such as '{}'", path,
                                  example != keys_below.end() ? *example : keys_below[0]));
      }
      return;
    }
    if (node.is_table()) {
      error(source, fmt::format("unknown table '{}'{}", path, suggestion(path, table_names(path), key_names(path))));
    } else {
      error(source, fmt::format("unknown key '{}'{}", path, suggestion(path, key_names(path), key_names(path))));
    }
  }

  std::vector<std::string> key_names(std::string_view near) const {
    std::vector<std::string> names;
    for (const ConfigKey* key : keys_) names.push_back(instantiate(key->path, near));
    return names;
  }

  std::vector<std::string> table_names(std::string_view near) const {
    std::vector<std::string> names;
    for (const ConfigKey* key : keys_) {
      auto segments = split_path(key->path);
      for (segments.pop_back(); !segments.empty(); segments.pop_back()) {
        std::string name = instantiate(join_path(segments), near);
        if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
      }
    }
    return names;
  }

  // The nearest name if one is close, else what the nearest existing table holds.
  static std::string suggestion(std::string_view wrong, const std::vector<std::string>& names,
                                const std::vector<std::string>& keys) {
    if (const auto best = nearest(wrong, names)) return fmt::format(" (did you mean '{}'?)", *best);
    const std::string there = what_is_there(wrong, keys);
    return there.empty() ? std::string() : fmt::format(" ({})", there);
  }

  const ConfigSchema& schema_;
  std::vector<const ConfigKey*> keys_;
  std::map<std::string, Entry, std::less<>> entries_;  // by concrete path
  std::deque<toml::table> override_holders_;  // own the --set values that entries_ points into
  std::set<std::string, std::less<>> override_sources_;  // their values may be plain strings
  std::vector<std::string> errors_;
};

std::string read_file(const std::filesystem::path& file) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(file, error)) {
    throw ConfigError(
        fmt::format("{}: config file not found{}", file.string(),
                    std::filesystem::exists(file, error) ? " (not a regular file)" : ""));
  }
  std::ifstream in(file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in) throw ConfigError(fmt::format("{}: config file could not be read", file.string()));
  return text.str();
}

}  // namespace

Config Config::from_file(const std::filesystem::path& file, const ConfigSchema& schema,
                         std::span<const std::string> overrides) {
  return from_string(read_file(file), schema, overrides, file.string());
}

Config Config::from_string(std::string_view toml_text, const ConfigSchema& schema,
                           std::span<const std::string> overrides, std::string_view source_name,
                           std::span<const ConfigOverrides> more_overrides) {
  Resolver resolver(schema);
  std::optional<toml::table> document;
  try {
    document = toml::parse(toml_text, source_name);
    resolver.add_document(*document, source_name);
  } catch (const toml::parse_error& parse_error) {
    const auto& begin = parse_error.source().begin;
    resolver.error(fmt::format("{}:{}:{}", source_name, begin.line, begin.column),
                   fmt::format("malformed TOML: {}", parse_error.description()));
  }
  for (const ConfigOverrides& group : more_overrides) {
    for (const std::string& assignment : group.assignments) resolver.add_override(assignment, group.source);
  }
  for (const std::string& assignment : overrides) resolver.add_override(assignment, command_line_source);
  // Without the file's values every key it sets would be reported missing: say only what broke.
  std::map<std::string, ConfigValue, std::less<>> values;
  if (document) values = resolver.resolve(source_name);
  resolver.throw_if_errors();
  return Config(schema, std::move(values));
}

Config Config::defaults(const ConfigSchema& schema, std::span<const std::string> overrides) {
  return from_string({}, schema, overrides, "<no config file>");
}

Config Config::with(std::span<const ConfigSetting> settings) const {
  std::map<std::string, ConfigValue, std::less<>> values = values_;
  for (const auto& [given_path, given] : settings) {
    const ConfigKey* key = schema_.resolve(given_path);
    if (key == nullptr) throw Error(fmt::format("Config::with: '{}' is not a key of this configuration", given_path));
    const std::string path = schema_.find(given_path)->alias_of.empty() ? given_path : key->path;
    ConfigValue value = given;
    if (key->type == ValueType::Float && std::holds_alternative<std::int64_t>(value)) {
      value = static_cast<double>(std::get<std::int64_t>(value));
    }
    if (type_of(value) != key->type) {
      throw Error(fmt::format("Config::with: '{}' given a value of another type", path));
    }
    if (auto why = config_detail::constraint_violation(*key, path, value)) throw ConfigError(*why);
    values[path] = std::move(value);
  }
  return Config(schema_, std::move(values));
}

}  // namespace lowcomm
