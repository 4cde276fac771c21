#pragma once
// Named arrays that carry a component's state (error-feedback residuals, warm-start factors,
// step counters) into a checkpoint and back. Keys are paths such as "residual/3".
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace lowcomm {

class StateDict {
 public:
  void put(std::string key, std::span<const float> values);
  void put(std::string key, std::int64_t value);
  // Throw lowcomm::Error naming the key when it is missing or of the other kind.
  const std::vector<float>& floats(std::string_view key) const;
  std::int64_t integer(std::string_view key) const;
  bool contains(std::string_view key) const;
  std::vector<std::string> keys() const;  // sorted
  std::vector<std::string> float_keys() const;    // sorted
  std::vector<std::string> integer_keys() const;  // sorted
  bool operator==(const StateDict&) const = default;

 private:
  std::map<std::string, std::vector<float>, std::less<>> floats_;
  std::map<std::string, std::int64_t, std::less<>> integers_;
};

}  // namespace lowcomm
