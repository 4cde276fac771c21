#include "value_text.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>

namespace lowcomm::config_detail {

std::string toml_literal(const ConfigValue& value) {
  switch (type_of(value)) {
    case ValueType::Boolean: return std::get<bool>(value) ? "true" : "false";
    case ValueType::Integer: return std::to_string(std::get<std::int64_t>(value));
    case ValueType::Float: return toml_float_literal(std::get<double>(value));
    case ValueType::String: return toml_string_literal(std::get<std::string>(value));
  }
  return {};
}

std::string toml_string_literal(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        // TOML forbids raw control characters (and DEL) in basic strings; UTF-8 passes through.
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
          out += fmt::format("\\u{:04X}", static_cast<unsigned char>(c));
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string toml_float_literal(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  std::string text(buffer, result.ptr);
  // to_chars writes 100.0 as "100", which TOML would read back as an integer.
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return text;
}

std::string number_text(double value) {
  if (std::isfinite(value) && value == std::trunc(value) && std::abs(value) < 1e15) {
    return fmt::format("{}", static_cast<std::int64_t>(value));
  }
  return toml_float_literal(value);
}

std::string_view type_description(ValueType type) {
  switch (type) {
    case ValueType::Boolean: return "a boolean";
    case ValueType::Integer: return "an integer";
    case ValueType::Float: return "a number";
    case ValueType::String: return "a string";
  }
  return {};
}

ValueType type_of(const ConfigValue& value) {
  // The variant's alternatives are declared in the same order as ValueType's enumerators.
  return static_cast<ValueType>(value.index());
}

}  // namespace lowcomm::config_detail

namespace lowcomm {

std::string value_text(const ConfigValue& value) { return config_detail::toml_literal(value); }

}  // namespace lowcomm
