#pragma once
// How one key of a registered component shows in a method's label (the name the analysis reports
// give a method: include/lowcomm/strategy/method_label.hpp), declared with its registration.
#include <optional>
#include <string>

namespace lowcomm {

struct LabelKey {
  std::string key;       // relative to the component's section: "inner_steps" of strategy.diloco
  std::string shown_as;  // "H": printed "H=500"
  // Left out at this value (as labels print it: "1", "0.999", "true"); nullopt: always shown.
  std::optional<std::string> hidden_at = std::nullopt;
  // Left out where it equals this other key of the section (NoLoCo's pull, at its outer_lr).
  std::optional<std::string> hidden_at_key = std::nullopt;
  // Printed after the error-feedback part of a compressor's label (PowerSGD's start=).
  bool late = false;
};

}  // namespace lowcomm
