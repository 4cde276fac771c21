#include "lowcomm/compress/registry.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <mutex>

#include "lowcomm/compress/error_feedback.hpp"
#include "lowcomm/error.hpp"

namespace lowcomm {

CompressorParameters::CompressorParameters(const Config& config, std::string prefix)
    : config_(config), prefix_(std::move(prefix)) {}

std::string CompressorParameters::key(std::string_view name) const {
  return fmt::format("{}.{}", prefix_, name);
}

bool CompressorParameters::has(std::string_view name) const { return config_.has(key(name)); }
bool CompressorParameters::get_bool(std::string_view name) const { return config_.get_bool(key(name)); }
std::int64_t CompressorParameters::get_int(std::string_view name) const { return config_.get_int(key(name)); }
double CompressorParameters::get_double(std::string_view name) const { return config_.get_double(key(name)); }
const std::string& CompressorParameters::get_string(std::string_view name) const {
  return config_.get_string(key(name));
}

void CompressorParameters::reject(std::string_view name, std::string_view why) const {
  throw ConfigError(fmt::format("'{}': {}", key(name), why));
}

CompressorRegistry& CompressorRegistry::global() {
  static CompressorRegistry registry;
  static std::once_flag builtins;
  std::call_once(builtins, [] { register_builtin_compressors(registry); });
  return registry;
}

void CompressorRegistry::add(CompressorInfo info) {
  const bool valid_name = !info.name.empty() && std::all_of(info.name.begin(), info.name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
  if (!valid_name) {
    throw Error(fmt::format("compressor name '{}' must be lower-case letters, digits and '_'", info.name));
  }
  if (!info.create) throw Error(fmt::format("compressor '{}' has no factory", info.name));
  const auto existing = std::ranges::find(compressors_, info.name, &CompressorInfo::name);
  if (existing != compressors_.end()) {
    throw Error(fmt::format("a compressor named '{}' is already registered", info.name));
  }
  compressors_.push_back(std::move(info));
}

const CompressorInfo& CompressorRegistry::find(std::string_view name) const {
  const auto found = std::ranges::find(compressors_, name, &CompressorInfo::name);
  if (found != compressors_.end()) return *found;
  std::vector<std::string_view> names;
  for (const CompressorInfo* info : all()) names.push_back(info->name);
  throw ConfigError(fmt::format("unknown compressor '{}': registered are {}", name, fmt::join(names, ", ")));
}

std::vector<const CompressorInfo*> CompressorRegistry::all() const {
  std::vector<const CompressorInfo*> sorted;
  for (const CompressorInfo& info : compressors_) sorted.push_back(&info);
  std::ranges::sort(sorted, {}, &CompressorInfo::name);
  return sorted;
}

void CompressorRegistry::add_config_keys(ConfigSchema& schema, std::string_view prefix) const {
  std::vector<std::string> names;
  for (const CompressorInfo* info : all()) names.push_back(info->name);
  if (names.empty()) throw Error("no compressor is registered");
  const bool has_none = std::ranges::find(names, "none") != names.end();
  schema.string(fmt::format("{}.name", prefix), has_none ? "none" : names.front(),
                "the compressor (lowcomm info lists them)", names);
  schema.string(fmt::format("{}.granularity", prefix), "tensor",
                "tensor: each tensor alone; bucket: tensors fused up to bucket_mb; global: the "
                "whole model as one vector",
                {"tensor", "bucket", "global"});
  schema.real(fmt::format("{}.bucket_mb", prefix), 25.0, "bucket size cap in MiB (granularity = bucket)",
              1e-6, 1e6);
  for (const CompressorInfo* info : all()) {
    for (ConfigKey key : info->parameters) {
      key.path = fmt::format("{}.{}.{}", prefix, info->name, key.path);
      schema.add(std::move(key));
    }
    schema.boolean(fmt::format("{}.{}.error_feedback", prefix, info->name), info->error_feedback_by_default,
                   "keep what was not transmitted and add it to the next step's gradient");
  }
}

std::unique_ptr<Compressor> CompressorRegistry::create(const Config& config, std::string_view prefix) const {
  const CompressorInfo& info = find(config.get_string(fmt::format("{}.name", prefix)));
  const CompressorParameters parameters(config, fmt::format("{}.{}", prefix, info.name));
  std::unique_ptr<Compressor> compressor = info.create(parameters);
  const Granularity granularity = parse_granularity(config.get_string(fmt::format("{}.granularity", prefix)));
  if (!compressor->supports(granularity)) {
    throw ConfigError(fmt::format("compressor '{}' does not support {}.granularity = \"{}\"", info.name,
                                  prefix, to_string(granularity)));
  }
  if (parameters.get_bool("error_feedback")) compressor = std::make_unique<ErrorFeedback>(std::move(compressor));
  return compressor;
}

RegisterCompressor::RegisterCompressor(CompressorInfo info) {
  CompressorRegistry::global().add(std::move(info));
}

}  // namespace lowcomm
