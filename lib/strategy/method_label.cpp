#include "lowcomm/strategy/method_label.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "lowcomm/compress/registry.hpp"
#include "lowcomm/strategy/registry.hpp"

namespace lowcomm {

namespace {

// Appends " <shown_as>=<value>" for each of `label` (under `section`) that is not hidden.
void append_keys(std::string& text, const Config& config, const std::string& section, const std::vector<LabelKey>& label,
                 bool late, std::vector<std::string>* keys) {
  for (const LabelKey& k : label) {
    if (k.late != late) continue;
    const std::string path = section + "." + k.key;
    if (!config.has(path)) continue;
    keys->push_back(path);
    const std::string value = label_value(config.value(path));
    if (k.hidden_at && value == *k.hidden_at) continue;
    if (k.hidden_at_key) {
      const std::string other = section + "." + *k.hidden_at_key;
      keys->push_back(other);
      if (config.has(other) && label_value(config.value(other)) == value) continue;
    }
    text += " " + (k.shown_as.empty() ? value : k.shown_as + "=" + value);
  }
}

}  // namespace

std::string label_value(const ConfigValue& value) {
  if (const bool* b = std::get_if<bool>(&value)) return *b ? "true" : "false";
  if (const std::int64_t* i = std::get_if<std::int64_t>(&value)) return std::to_string(*i);
  if (const double* d = std::get_if<double>(&value)) return fmt::format("{:g}", *d);
  return std::get<std::string>(value);
}

std::string compressor_label(const Config& config, const std::string& name, std::vector<std::string>* keys) {
  const CompressorInfo& info = CompressorRegistry::global().find(name);
  const std::string section = "compressor." + name;
  std::string text = name;
  append_keys(text, config, section, info.label, /*late=*/false, keys);
  const auto read = [&](const std::string& key) -> std::optional<std::string> {
    const std::string path = section + "." + key;
    if (!config.has(path)) return std::nullopt;
    keys->push_back(path);
    return label_value(config.value(path));
  };
  if (const auto type = read("value_type"); type && *type != "fp32") text += " " + *type;
  if (const auto feedback = read("error_feedback"); feedback && (*feedback == "true") != info.error_feedback_by_default) {
    text += *feedback == "true" ? " EF" : " no-EF";
  }
  append_keys(text, config, section, info.label, /*late=*/true, keys);
  if (const auto decay = read("error_feedback_decay"); decay && *decay != "1") text += " beta=" + *decay;
  return text + exchange_label(config, name, keys);
}

std::string exchange_label(const Config& config, const std::string& name, std::vector<std::string>* keys) {
  const std::string path = "compressor." + name + ".exchange";
  if (!config.has(path)) return "";
  keys->push_back(path);
  const std::string& exchange = config.get_string(path);
  if (exchange == "gather" || exchange == "all_reduce") return "";
  std::string text = " exchange=" + exchange;
  if (config.has("compressor.merge_groups")) {
    keys->push_back("compressor.merge_groups");
    if (const std::string& groups = config.get_string("compressor.merge_groups"); groups != "none") {
      text += " merge_groups=" + groups;
    }
  }
  return text;
}

MethodLabel method_label(const Config& config) {
  MethodLabel label;
  const std::string& strategy = config.get_string("strategy.name");
  label.keys.push_back("strategy.name");
  const StrategyInfo& info = StrategyRegistry::global().find(strategy);
  if (info.custom_label) {
    label.text = strategy + "/" + info.custom_label(config, &label.keys);
  } else {
    label.text = strategy;
    append_keys(label.text, config, "strategy." + strategy, info.label, /*late=*/false, &label.keys);
    if (info.label_names_optimizer && config.has("optimizer.name")) {
      label.keys.push_back("optimizer.name");
      if (const std::string& optimizer = config.get_string("optimizer.name"); optimizer != "adamw") {
        label.text += " " + optimizer;
      }
    }
    label.keys.push_back("compressor.name");
    label.text += "/" + compressor_label(config, config.get_string("compressor.name"), &label.keys);
  }
  std::ranges::sort(label.keys);
  label.keys.erase(std::unique(label.keys.begin(), label.keys.end()), label.keys.end());
  return label;
}

}  // namespace lowcomm
