#pragma once
// The CompressedAllReduce a strategy sends its traffic through, made from a configuration's
// compressor section (compressor.name, .granularity, .bucket_mb and the compressor's own keys).
#include <cstdint>
#include <memory>

#include "lowcomm/compress/compressed_all_reduce.hpp"
#include "lowcomm/strategy/registry.hpp"

namespace lowcomm::strategy {

// The whole model's tensors through the compressor setup.config names, every step.
PlannedSync planned_sync(const Config& config, std::size_t tensors);
std::unique_ptr<CompressedAllReduce> make_compressed_sync(const StrategySetup& setup);

// The exchange `planned` describes, over its tensors of setup.tensors.
std::unique_ptr<CompressedAllReduce> make_compressed_sync(const StrategySetup& setup, PlannedSync planned);

}  // namespace lowcomm::strategy
