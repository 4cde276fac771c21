#pragma once
// Configuration: a schema of typed, documented keys; a TOML file plus `--set key=value`
// overrides validated against it (every problem reported at once, each saying what to change);
// and the resolved result, whose text and hash let all ranks check they run the same experiment.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace lowcomm {

using ConfigValue = std::variant<bool, std::int64_t, double, std::string>;

enum class ValueType { Boolean, Integer, Float, String };

// The members other than path and type have default initializers so that designated
// initializers may leave them out (GCC's -Wextra warns about omitted members otherwise).
struct ConfigKey {
  // Dotted, e.g. "network.scenario". A segment "*" is a wildcard matching any one segment of
  // [A-Za-z0-9_-]+, e.g. "network.rank.*.upload_mbps" matches "network.rank.3.upload_mbps".
  std::string path;
  ValueType type;
  // A non-wildcard key without default is required, unless `optional`. A wildcard key's default,
  // if any, is the value of every instance that is not set (instances() lists only the set ones).
  std::optional<ConfigValue> default_value{};
  std::string description{};
  std::optional<double> min{}, max{};  // inclusive numeric bounds
  bool max_exclusive = false;          // max itself is refused: [min, max), a decay below 1
  std::vector<std::string> choices{};  // allowed values of a String key; empty: any
  // A key without default that may be left unset (has() is false): an override of something
  // computed elsewhere, e.g. one link parameter of a named network scenario.
  bool optional = false;
  // Another name of the key at this (full) path, e.g. a reference implementation's name. Setting
  // either sets that key; setting both in one file or one command line is an error. An alias has
  // no value of its own: no default, bounds or choices (type and description are for listings),
  // and the resolved configuration writes the key under its own name only.
  std::string alias_of{};
  // A String key one of whose values is a count (compressor.merge_groups = 16): an integer written
  // for it is taken as its decimal text instead of refused as a number for a string.
  bool integers_as_text = false;
};

class ConfigSchema {
 public:
  // Throws lowcomm::Error on a duplicate or malformed path, a path that would be both a value and
  // a table, or a default that violates its own constraints.
  ConfigSchema& add(ConfigKey key);
  ConfigSchema& boolean(std::string path, bool def, std::string description);
  ConfigSchema& integer(std::string path, std::int64_t def, std::string description,
                        std::optional<double> min = {}, std::optional<double> max = {});
  ConfigSchema& real(std::string path, double def, std::string description,
                     std::optional<double> min = {}, std::optional<double> max = {});
  ConfigSchema& string(std::string path, std::string def, std::string description,
                       std::vector<std::string> choices = {});

  // The key a concrete path belongs to (wildcards match; the key with the fewest wildcards wins),
  // or nullptr. An alias is found as itself; resolve() follows it to the key it names.
  const ConfigKey* find(std::string_view concrete_path) const;
  // The key that holds the value of `concrete_path`: find(), following an alias (lowcomm::Error
  // when an alias names no key, which is the schema's mistake).
  const ConfigKey* resolve(std::string_view concrete_path) const;
  std::vector<const ConfigKey*> keys() const;  // sorted by path

 private:
  std::map<std::string, ConfigKey, std::less<>> keys_;
};

// A value as the resolved configuration writes it (strings quoted, floats as "3.0"): for messages.
std::string value_text(const ConfigValue& value);

// "section.key=value" assignments that did not come from the command line, with the name the
// messages give their source.
struct ConfigOverrides {
  std::span<const std::string> assignments;
  std::string source;
};

// One key set to one typed value, as code (not a user) derives a configuration.
struct ConfigSetting {
  std::string path;
  ConfigValue value;  // an integer for a Float key is converted
};

class Config {
 public:
  // Parse TOML, apply overrides "a.b=value" (the value is read as a TOML value, or as a plain
  // string when it is not valid TOML, so network.scenario=consumer works), validate, fill
  // defaults. Throws lowcomm::ConfigError listing every problem, one per line.
  static Config from_file(const std::filesystem::path& file, const ConfigSchema& schema,
                          std::span<const std::string> overrides = {});
  // `more_overrides` (each group named by its own source in messages, e.g. an experiment file's
  // settings of a grid point) apply after the file and before `overrides`, the command line's
  // ("--set" in messages), which has the last word.
  static Config from_string(std::string_view toml_text, const ConfigSchema& schema,
                            std::span<const std::string> overrides = {},
                            std::string_view source_name = "<string>",
                            std::span<const ConfigOverrides> more_overrides = {});
  static Config defaults(const ConfigSchema& schema, std::span<const std::string> overrides = {});

  // This configuration with `settings` applied, checked against the same schema's bounds and
  // choices (ConfigError naming the key), without going through TOML text: how a strategy
  // derives the configuration of the compressor it drives. A path the schema lacks, or a value of
  // another type, is a programming error (lowcomm::Error).
  Config with(std::span<const ConfigSetting> settings) const;

  // The getters throw lowcomm::Error for a path that is unknown, unset, or of another type: that
  // is a programming error, the schema is the caller's. get_double() is for Float keys only
  // (integers written for them were converted at load).
  bool has(std::string_view path) const;
  bool get_bool(std::string_view path) const;
  std::int64_t get_int(std::string_view path) const;
  double get_double(std::string_view path) const;
  const std::string& get_string(std::string_view path) const;
  // The value whatever its type (for what prints any key alike).
  const ConfigValue& value(std::string_view path) const { return value_of(path); }

  // The concrete paths set for a wildcard key, sorted (numeric segments numerically).
  std::vector<std::string> instances(std::string_view wildcard_path) const;

  // Every set key with its value (defaults filled) in a fixed order, as TOML that from_string
  // reads back to an equal Config.
  std::string to_toml() const;
  std::uint64_t hash() const;  // FNV-1a 64 of to_toml()
  // The same of the values that differ from their keys' defaults (and of those whose key has
  // none): an identity that a key added to the schema later, at its default, leaves unchanged.
  // A checkpoint records it, so a later build with more keys still resumes the run.
  std::uint64_t hash_of_changes() const;

  // What differs from `earlier` (a configuration of the same schema), one entry per concrete path
  // in a fixed order: "path = value (was earlier's value)", "unset" for a path set on one side
  // only. For messages such as a refused --resume.
  std::vector<std::string> changes_since(const Config& earlier) const;

  // Equal when they resolve to the same values (the schemas are not compared).
  bool operator==(const Config& other) const { return values_ == other.values_; }

 private:
  Config(ConfigSchema schema, std::map<std::string, ConfigValue, std::less<>> values);
  const ConfigValue& value_of(std::string_view path) const;

  ConfigSchema schema_;
  std::map<std::string, ConfigValue, std::less<>> values_;  // by concrete path
};

}  // namespace lowcomm
