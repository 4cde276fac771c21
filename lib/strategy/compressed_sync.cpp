#include "compressed_sync.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "lowcomm/comm/network_config.hpp"
#include "lowcomm/compress/registry.hpp"
#include "lowcomm/error.hpp"

namespace lowcomm::strategy {

std::unique_ptr<CompressedAllReduce> make_compressed_sync(const StrategySetup& setup, PlannedSync planned) {
  if (planned.first + planned.count > setup.tensors.size()) {
    throw Error(fmt::format("a planned exchange of tensors [{}, {}) of a model with {}", planned.first,
                            planned.first + planned.count, setup.tensors.size()));
  }
  const auto first = setup.tensors.begin() + static_cast<std::ptrdiff_t>(planned.first);
  return std::make_unique<CompressedAllReduce>(
      setup.comm, std::move(planned.compressor),
      std::vector<TensorInfo>(first, first + static_cast<std::ptrdiff_t>(planned.count)), planned.granularity,
      planned.bucket_bytes, setup.seed, setup.execution,
      participation_from_config(setup.config, setup.comm.size(), setup.seed),
      merge_groups_from_rule(setup.config, planned.merge_groups, setup.comm.size()));
}

PlannedSync planned_sync(const Config& config, std::size_t tensors) {
  const CompressorSelection selection = compressor_selection(config);
  std::unique_ptr<Compressor> compressor = CompressorRegistry::global().create(config);
  if (selection.merge_groups != "none" && compressor->aggregation() != Aggregation::Merged) {
    throw ConfigError(fmt::format("compressor.merge_groups = \"{}\" groups the ranks of a merge tree, and compressor "
                                  "'{}' does not merge: set its exchange = \"tree\" (none, topk, dct_topk, sparseloco), or unset "
                                  "merge_groups",
                                  selection.merge_groups, selection.name));
  }
  return {.first = 0, .count = tensors, .compressor = std::move(compressor), .granularity = selection.granularity,
          .bucket_bytes = selection.bucket_bytes, .period = 1, .merge_groups = selection.merge_groups};
}

std::unique_ptr<CompressedAllReduce> make_compressed_sync(const StrategySetup& setup) {
  return make_compressed_sync(setup, planned_sync(setup.config, setup.tensors.size()));
}

}  // namespace lowcomm::strategy
