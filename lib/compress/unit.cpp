#include "lowcomm/compress/unit.hpp"

#include <fmt/format.h>

#include <charconv>

#include "lowcomm/error.hpp"

namespace lowcomm {

std::int64_t UnitContext::numel() const { return numel_of(shape); }

std::uint32_t unit_id_of_state_key(std::string_view key, std::string_view prefix) {
  const std::string_view digits = key.starts_with(prefix) ? key.substr(prefix.size()) : std::string_view();
  std::uint32_t id = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), id);
  if (digits.empty() || error != std::errc() || end != digits.data() + digits.size()) {
    throw Error(fmt::format("state key '{}' does not name a unit: expected {}<unit id>", key, prefix));
  }
  return id;
}

}  // namespace lowcomm
