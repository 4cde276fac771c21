#include "lowcomm/compress/compressor.hpp"

#include <fmt/format.h>

#include "lowcomm/error.hpp"

namespace lowcomm {

std::string_view to_string(Aggregation aggregation) {
  switch (aggregation) {
    case Aggregation::Summable: return "summable";
    case Aggregation::Gathered: return "gathered";
    case Aggregation::MultiRound: return "multi-round";
    case Aggregation::Merged: return "merged";
  }
  return "?";
}

std::string_view to_string(Granularity granularity) {
  switch (granularity) {
    case Granularity::PerTensor: return "tensor";
    case Granularity::Bucket: return "bucket";
    case Granularity::Global: return "global";
  }
  return "?";
}

Granularity parse_granularity(std::string_view name) {
  for (auto g : {Granularity::PerTensor, Granularity::Bucket, Granularity::Global}) {
    if (to_string(g) == name) return g;
  }
  throw ConfigError(fmt::format("unknown granularity '{}': use tensor, bucket or global", name));
}

std::vector<std::byte> Compressor::merge(const UnitContext& unit, std::span<const std::byte>,
                                         std::span<const std::byte>) const {
  throw Error(fmt::format("unit '{}': this compressor does not merge payloads (its aggregation is {})", unit.name,
                          to_string(aggregation())));
}

void Compressor::save_state(StateDict&, std::string_view) const {}
void Compressor::load_state(const StateDict&, std::string_view) {}

}  // namespace lowcomm
