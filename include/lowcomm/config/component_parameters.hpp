#pragma once
// A registered component's own configuration keys (<section>.<name>.*: compressor.topk.ratio,
// optimizer.adamw.beta1, ...), read from a resolved Config by their names relative to the section.
#include <cstdint>
#include <string>
#include <string_view>

#include "lowcomm/config/config.hpp"

namespace lowcomm {

class ComponentParameters {
 public:
  ComponentParameters(const Config& config, std::string prefix);  // prefix "compressor.topk"
  bool has(std::string_view name) const;
  bool get_bool(std::string_view name) const;
  std::int64_t get_int(std::string_view name) const;
  double get_double(std::string_view name) const;
  const std::string& get_string(std::string_view name) const;
  const std::string& prefix() const { return prefix_; }
  // Throws ConfigError "'<prefix>.<name>': <why>" for constraints between parameters that the
  // schema cannot express (k and ratio both set, ...).
  [[noreturn]] void reject(std::string_view name, std::string_view why) const;

 private:
  std::string key(std::string_view name) const;
  const Config& config_;
  std::string prefix_;
};

}  // namespace lowcomm
