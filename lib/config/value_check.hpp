#pragma once
// Whether a value fits its key: the TOML value's type against the key's, and the key's bounds
// and choices. Messages name the key, the value given and what is allowed, without a source.
#include <toml++/toml.h>

#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "lowcomm/config/config.hpp"

namespace lowcomm::config_detail {

// The value, converted to the key's type (an integer for a Float key becomes a double), or the
// message saying why it does not fit. `from_command_line` adds the hint on quoting for --set.
std::variant<ConfigValue, std::string> read_value(const ConfigKey& key, std::string_view path,
                                                  const toml::node& node,
                                                  bool from_command_line);

// The message for a value of the right type outside the key's bounds or choices, if it is.
std::optional<std::string> constraint_violation(const ConfigKey& key, std::string_view path,
                                                const ConfigValue& value);

}  // namespace lowcomm::config_detail
