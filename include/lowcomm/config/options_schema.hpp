#pragma once
// A section's options as one typed struct, declared once. Each field names its key (relative to
// the section: "beta1" in optimizer.adamw), the member it fills, a description and its range;
// its type is the member's (bool, an integer, a floating-point type, std::string, or std::optional
// of one for a key that may be left unset) and its default the member's value in a
// value-initialised struct, so the struct's defaults and the listed ones cannot drift apart. The
// same declaration gives the section's schema keys (for the registries and `lowcomm info`) and
// reads a resolved configuration into the struct: no key is spelt twice.
//
//     const OptionsSchema<SgdOptions>& sgd_schema() {
//       static const auto schema = OptionsSchema<SgdOptions>()
//           .field("momentum", &SgdOptions::momentum, "SGD momentum factor", {.min = 0.0})
//           .field("nesterov", &SgdOptions::nesterov, "SGD Nesterov momentum");
//       return schema;
//     }
//     info.parameters = sgd_schema().keys();
//     const SgdOptions options = sgd_schema().read(ComponentParameters(config, "optimizer.sgd"));
#include <concepts>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "lowcomm/config/component_parameters.hpp"
#include "lowcomm/config/config.hpp"

namespace lowcomm {

// What the schema checks of a field's value besides its type.
struct FieldLimits {
  std::optional<double> min{}, max{};  // inclusive numeric bounds
  bool max_exclusive = false;          // max itself is refused: [min, max)
  std::vector<std::string> choices{};  // allowed values of a string field; empty: any
};

template <class Options>
class OptionsSchema {
 public:
  template <class T>
  OptionsSchema& field(std::string path, T Options::*member, std::string description, FieldLimits limits = {}) {
    using Value = typename Unwrapped<T>::type;
    ConfigKey key{.path = path, .type = value_type<Value>(), .description = std::move(description),
                  .min = limits.min, .max = limits.max, .max_exclusive = limits.max_exclusive,
                  .choices = std::move(limits.choices)};
    const T initial = Options{}.*member;
    if constexpr (Unwrapped<T>::optional) {
      key.optional = !initial.has_value();
      if (initial) key.default_value = ConfigValue(stored(*initial));
    } else {
      key.default_value = ConfigValue(stored(initial));
    }
    keys_.push_back(std::move(key));
    readers_.push_back([path = std::move(path), member](Options& options, const ComponentParameters& section) {
      if constexpr (Unwrapped<T>::optional) {
        if (!section.has(path)) {
          options.*member = std::nullopt;
          return;
        }
      }
      options.*member = read_value<Value>(section, path);
    });
    return *this;
  }

  // A key of the section that fills no member: another name of a key elsewhere (alias_of), read
  // by whoever owns that key.
  OptionsSchema& alias(ConfigKey key) {
    keys_.push_back(std::move(key));
    return *this;
  }

  // The section's keys, paths relative to it.
  const std::vector<ConfigKey>& keys() const { return keys_; }

  // Adds the keys to `schema` under `section` ("train": train.steps, ...).
  void add_to(ConfigSchema& schema, std::string_view section) const {
    for (ConfigKey key : keys_) {
      key.path = std::string(section) + "." + key.path;
      schema.add(std::move(key));
    }
  }

  // Every field from its key under `section` of a resolved configuration.
  Options read(const Config& config, std::string section) const {
    return read(ComponentParameters(config, std::move(section)));
  }

  // Every field from its key; members without a field keep their defaults.
  Options read(const ComponentParameters& section) const {
    Options options{};
    for (const auto& reader : readers_) reader(options, section);
    return options;
  }

 private:
  template <class T>
  struct Unwrapped {
    using type = T;
    static constexpr bool optional = false;
  };
  template <class T>
  struct Unwrapped<std::optional<T>> {
    using type = T;
    static constexpr bool optional = true;
  };

  template <class Value>
  static constexpr ValueType value_type() {
    if constexpr (std::same_as<Value, bool>) {
      return ValueType::Boolean;
    } else if constexpr (std::integral<Value>) {
      return ValueType::Integer;
    } else if constexpr (std::floating_point<Value>) {
      return ValueType::Float;
    } else {
      static_assert(std::same_as<Value, std::string>, "a field is bool, an integer, a floating-point type or a string");
      return ValueType::String;
    }
  }

  // The value as the configuration stores it (bool, int64, double, string).
  template <class Value>
  static auto stored(const Value& value) {
    if constexpr (std::same_as<Value, bool> || std::same_as<Value, std::string>) {
      return value;
    } else if constexpr (std::integral<Value>) {
      return static_cast<std::int64_t>(value);
    } else {
      return static_cast<double>(value);
    }
  }

  template <class Value>
  static Value read_value(const ComponentParameters& section, const std::string& path) {
    if constexpr (std::same_as<Value, bool>) {
      return section.get_bool(path);
    } else if constexpr (std::integral<Value>) {
      return static_cast<Value>(section.get_int(path));
    } else if constexpr (std::floating_point<Value>) {
      return static_cast<Value>(section.get_double(path));
    } else {
      return section.get_string(path);
    }
  }

  std::vector<ConfigKey> keys_;
  std::vector<std::function<void(Options&, const ComponentParameters&)>> readers_;
};

}  // namespace lowcomm
