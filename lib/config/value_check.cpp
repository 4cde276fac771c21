#include "value_check.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <sstream>

#include "suggest.hpp"
#include "value_text.hpp"

namespace lowcomm::config_detail {

namespace {

// How a TOML value is shown after "got": as written for scalars, by kind for the rest.
std::string describe(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::string: return toml_string_literal(node.as_string()->get());
    case toml::node_type::integer: return std::to_string(node.as_integer()->get());
    case toml::node_type::floating_point:
      return toml_float_literal(node.as_floating_point()->get());
    case toml::node_type::boolean: return node.as_boolean()->get() ? "true" : "false";
    case toml::node_type::array: {
      std::ostringstream text;
      text << *node.as_array();
      const std::string printed = text.str();
      return printed.size() <= 60 && printed.find('\n') == std::string::npos
                 ? "an array " + printed
                 : "an array";
    }
    case toml::node_type::table: return "a table";
    case toml::node_type::date: return "a date";
    case toml::node_type::time: return "a time";
    case toml::node_type::date_time: return "a date-time";
    case toml::node_type::none: break;
  }
  return "nothing";
}

std::string_view expectation(ValueType type) {
  return type == ValueType::Boolean ? "true or false" : type_description(type);
}

std::string type_mismatch(const ConfigKey& key, std::string_view path, const toml::node& node,
                          bool from_command_line) {
  std::string message =
      fmt::format("'{}' must be {}, got {}", path, expectation(key.type), describe(node));
  if (key.type == ValueType::Integer && node.is_floating_point()) {
    const double value = node.as_floating_point()->get();
    if (std::isfinite(value) && value == std::trunc(value)) {
      message += fmt::format(" (write it without a decimal point: {})", number_text(value));
    }
  } else if (key.type == ValueType::String && from_command_line && node.is_value()) {
    // The shell ate the quotes that would have made it text.
    message += fmt::format(" (to pass it as text, quote it: --set {}='\"{}\"')", path,
                           describe(node));
  }
  return message;
}

std::string bounds_text(const ConfigKey& key) {
  if (key.min && key.max) {
    return fmt::format("in [{}, {}{}", number_text(*key.min), number_text(*key.max), key.max_exclusive ? ")" : "]");
  }
  return key.min ? ">= " + number_text(*key.min) : (key.max_exclusive ? "< " : "<= ") + number_text(*key.max);
}

std::string choices_text(const std::vector<std::string>& choices) {
  std::string text;
  for (const std::string& choice : choices) {
    if (!text.empty()) text += ", ";
    text += toml_string_literal(choice);
  }
  return text;
}

}  // namespace

std::variant<ConfigValue, std::string> read_value(const ConfigKey& key, std::string_view path,
                                                  const toml::node& node,
                                                  bool from_command_line) {
  std::optional<ConfigValue> value;
  switch (key.type) {
    case ValueType::Boolean:
      if (const auto* b = node.as_boolean()) value = b->get();
      break;
    case ValueType::Integer:
      if (const auto* i = node.as_integer()) value = i->get();
      break;
    case ValueType::Float:
      if (const auto* f = node.as_floating_point()) value = f->get();
      if (const auto* i = node.as_integer()) value = static_cast<double>(i->get());
      break;
    case ValueType::String:
      if (const auto* s = node.as_string()) value = s->get();
      if (const auto* i = node.as_integer(); i && key.integers_as_text) value = std::to_string(i->get());
      break;
  }
  if (!value) return type_mismatch(key, path, node, from_command_line);
  if (auto violation = constraint_violation(key, path, *value)) return *std::move(violation);
  return *std::move(value);
}

std::optional<std::string> constraint_violation(const ConfigKey& key, std::string_view path,
                                                const ConfigValue& value) {
  if (const auto* text = std::get_if<std::string>(&value)) {
    const auto& choices = key.choices;
    if (choices.empty() || std::find(choices.begin(), choices.end(), *text) != choices.end()) {
      return std::nullopt;
    }
    std::string message = fmt::format("'{}' must be one of {}; got {}", path,
                                      choices_text(choices), toml_string_literal(*text));
    if (auto suggestion = nearest(*text, choices)) {
      message += fmt::format(" (did you mean {}?)", toml_string_literal(*suggestion));
    }
    return message;
  }
  if (std::holds_alternative<bool>(value)) return std::nullopt;
  const double number = std::holds_alternative<double>(value)
                            ? std::get<double>(value)
                            : static_cast<double>(std::get<std::int64_t>(value));
  // Written as "not inside" so that NaN, which compares false to everything, is out of range.
  const bool below = key.min && !(number >= *key.min);
  const bool above = key.max && !(key.max_exclusive ? number < *key.max : number <= *key.max);
  if (!below && !above) return std::nullopt;
  return fmt::format("'{}' must be {}, got {}", path, bounds_text(key), toml_literal(value));
}

}  // namespace lowcomm::config_detail
