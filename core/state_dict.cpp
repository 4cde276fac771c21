#include "lowcomm/core/state_dict.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "lowcomm/error.hpp"

namespace lowcomm {

void StateDict::put(std::string key, std::span<const float> values) {
  integers_.erase(key);
  floats_[std::move(key)].assign(values.begin(), values.end());
}

void StateDict::put(std::string key, std::int64_t value) {
  floats_.erase(key);
  integers_[std::move(key)] = value;
}

const std::vector<float>& StateDict::floats(std::string_view key) const {
  const auto it = floats_.find(key);
  if (it == floats_.end()) throw Error(fmt::format("state has no float array '{}'", key));
  return it->second;
}

std::int64_t StateDict::integer(std::string_view key) const {
  const auto it = integers_.find(key);
  if (it == integers_.end()) throw Error(fmt::format("state has no integer '{}'", key));
  return it->second;
}

bool StateDict::contains(std::string_view key) const {
  return floats_.find(key) != floats_.end() || integers_.find(key) != integers_.end();
}

std::vector<std::string> StateDict::keys() const {
  std::vector<std::string> keys;
  for (const auto& [key, value] : floats_) keys.push_back(key);
  for (const auto& [key, value] : integers_) keys.push_back(key);
  std::sort(keys.begin(), keys.end());
  return keys;
}

std::vector<std::string> StateDict::float_keys() const {
  std::vector<std::string> keys;
  for (const auto& [key, value] : floats_) keys.push_back(key);
  return keys;
}

std::vector<std::string> StateDict::integer_keys() const {
  std::vector<std::string> keys;
  for (const auto& [key, value] : integers_) keys.push_back(key);
  return keys;
}

}  // namespace lowcomm
