#pragma once
// Values written as TOML literals: in the resolved configuration text, whose bytes are hashed
// and so must not depend on locale or platform, and in error messages.
#include <string>
#include <string_view>

#include "lowcomm/config/config.hpp"

namespace lowcomm::config_detail {

std::string toml_literal(const ConfigValue& value);
std::string toml_string_literal(std::string_view text);  // a basic string, "..." with escapes
// The shortest text that reads back to the same double, always recognisable as a float ("3.0").
std::string toml_float_literal(double value);
// A bound or number in prose: "3" rather than "3.0" when it is integral.
std::string number_text(double value);

// "a boolean", "an integer", "a number", "a string": what a key expects, for messages.
std::string_view type_description(ValueType type);
ValueType type_of(const ConfigValue& value);

}  // namespace lowcomm::config_detail
