#include "compressed_sync.hpp"

#include <algorithm>
#include <cmath>

#include "lowcomm/compress/registry.hpp"

namespace lowcomm::strategy {

std::uint64_t bucket_bytes(const Config& config) {
  const double bucket_mb = config.get_double("compressor.bucket_mb");
  return std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::llround(bucket_mb * 1024.0 * 1024.0)));
}

std::unique_ptr<CompressedAllReduce> make_compressed_sync(const StrategySetup& setup,
                                                          const Config& config,
                                                          std::unique_ptr<Compressor> compressor) {
  return std::make_unique<CompressedAllReduce>(
      setup.comm, std::move(compressor), setup.tensors,
      parse_granularity(config.get_string("compressor.granularity")), bucket_bytes(config), setup.seed,
      setup.execution);
}

std::unique_ptr<CompressedAllReduce> make_compressed_sync(const StrategySetup& setup) {
  return make_compressed_sync(setup, setup.config, CompressorRegistry::global().create(setup.config));
}

}  // namespace lowcomm::strategy
