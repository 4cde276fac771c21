#pragma once
// The CompressedAllReduce a strategy sends its traffic through, made from a configuration's
// compressor section (compressor.name, .granularity, .bucket_mb and the compressor's own keys).
#include <cstdint>
#include <memory>

#include "lowcomm/compress/compressed_all_reduce.hpp"
#include "lowcomm/strategy/registry.hpp"

namespace lowcomm::strategy {

// compressor.bucket_mb in bytes (at least 1).
std::uint64_t bucket_bytes(const Config& config);

// `compressor` replaces the one the configuration names (DeMo wraps its transport first).
std::unique_ptr<CompressedAllReduce> make_compressed_sync(const StrategySetup& setup,
                                                          const Config& config,
                                                          std::unique_ptr<Compressor> compressor);
std::unique_ptr<CompressedAllReduce> make_compressed_sync(const StrategySetup& setup);

}  // namespace lowcomm::strategy
