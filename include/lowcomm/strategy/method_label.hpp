#pragma once
// A method's label: the name the analysis reports give the runs of one method,
// "<strategy part>/<compressor part>", e.g. "diloco H=30 F=2/topk ratio=0.1 EF". Each part is the
// component's name and its label keys (StrategyInfo::label, CompressorInfo::label), so a new
// built-in or plug-in labels itself. `lowcomm train` writes it into the run log (attribute
// `label`, docs/log-format.md) and analysis/ reads it there; for logs written before, analysis/
// methods.py derives the same from the configuration (tests/analysis hold the two together).
#include <string>
#include <vector>

#include "lowcomm/config/config.hpp"

namespace lowcomm {

struct MethodLabel {
  std::string text;
  std::vector<std::string> keys;  // the configuration keys it was made from, full paths, sorted
};

// The label of a training configuration (strategy.*, optimizer.*, compressor.*).
MethodLabel method_label(const Config& config);

// The compressor part of a label for compressor `name`, under `prefix` ("compressor"): its name,
// its label keys, a value type other than fp32, error feedback where not its default (EF /
// no-EF), a decay (beta=) and a merged exchange. `keys` collects what it read.
std::string compressor_label(const Config& config, const std::string& name, std::vector<std::string>* keys);

// " exchange=tree" (with " merge_groups=<rule>" where set) for a merged exchange of compressor
// `name`; "" for a gathered or summed one.
std::string exchange_label(const Config& config, const std::string& name, std::vector<std::string>* keys);

// How a label prints a value: true/false, integers as written, floats as %g, strings bare.
std::string label_value(const ConfigValue& value);

}  // namespace lowcomm
