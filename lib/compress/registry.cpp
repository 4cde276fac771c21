#include "lowcomm/compress/registry.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <mutex>

#include "lowcomm/compress/error_feedback.hpp"
#include "lowcomm/error.hpp"

namespace lowcomm {

CompressorRegistry& CompressorRegistry::global() {
  static CompressorRegistry registry;
  static std::once_flag builtins;
  std::call_once(builtins, [] { register_builtin_compressors(registry); });
  return registry;
}

void CompressorRegistry::add_config_keys(ConfigSchema& schema, std::string_view prefix) const {
  const std::vector<std::string> names = this->names();
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
  schema.add({.path = fmt::format("{}.merge_groups", prefix),
              .type = ValueType::String,
              .default_value = std::string("none"),
              .description = "a merged exchange's tree (none, topk, dct_topk or sparseloco with exchange = tree): "
                             "none (a butterfly over all ranks), all (reduce to one rank and broadcast), regions "
                             "(network.regions: reduce in each region, a butterfly of one rank per region, "
                             "broadcast back), or n (the same in blocks of n consecutive ranks, e.g. a node's; a "
                             "number or its text)",
              .integers_as_text = true});
  for (const CompressorInfo* info : all()) {
    for (ConfigKey key : info->parameters) {
      key.path = fmt::format("{}.{}.{}", prefix, info->name, key.path);
      schema.add(std::move(key));
    }
    schema.boolean(fmt::format("{}.{}.error_feedback", prefix, info->name), info->error_feedback_by_default,
                   "keep what was not transmitted and add it to the next step's gradient");
    schema.real(fmt::format("{}.{}.error_feedback_decay", prefix, info->name), 1.0,
                "beta of error feedback: the input is gradient + beta*residual (1: plain error feedback; "
                "SparseLoCo's accumulator: 0.95)",
                0.0, 1.0);
  }
}

CompressorSelection compressor_selection(const Config& config, std::string_view prefix) {
  const double bucket_mb = config.get_double(fmt::format("{}.bucket_mb", prefix));
  return {.name = config.get_string(fmt::format("{}.name", prefix)),
          .granularity = parse_granularity(config.get_string(fmt::format("{}.granularity", prefix))),
          .bucket_bytes = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::llround(bucket_mb * 1024.0 * 1024.0))),
          .merge_groups = config.get_string(fmt::format("{}.merge_groups", prefix))};
}

std::unique_ptr<Compressor> CompressorRegistry::create(const Config& config, std::string_view prefix) const {
  const CompressorSelection selection = compressor_selection(config, prefix);
  const CompressorInfo& info = find(selection.name);
  const CompressorParameters parameters(config, fmt::format("{}.{}", prefix, info.name));
  std::unique_ptr<Compressor> compressor = info.create(parameters);
  const Granularity granularity = selection.granularity;
  if (!compressor->supports(granularity)) {
    throw ConfigError(fmt::format("compressor '{}' does not support {}.granularity = \"{}\"", info.name,
                                  prefix, to_string(granularity)));
  }
  const double decay = parameters.get_double("error_feedback_decay");
  if (parameters.get_bool("error_feedback")) {
    compressor = std::make_unique<ErrorFeedback>(std::move(compressor), static_cast<float>(decay));
  } else if (decay != 1.0) {
    throw ConfigError(fmt::format("{0}.{1}.error_feedback_decay = {2} decays the residual of error feedback, which "
                                  "is off: set {0}.{1}.error_feedback = true, or leave the decay at 1",
                                  prefix, info.name, decay));
  }
  return compressor;
}

RegisterCompressor::RegisterCompressor(CompressorInfo info) {
  register_statically(CompressorRegistry::global(), std::move(info));
}

}  // namespace lowcomm
