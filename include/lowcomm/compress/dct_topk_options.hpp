#pragma once
// The settings of DeMo's DCT transport, compressor.dct_topk.* (strategy.demo.compression_topk,
// compression_chunk and wire are aliases of them). Public because the demo strategy checks a run
// against them: the block side it warns about, and a wire set for a transport that has none.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "lowcomm/config/config.hpp"

namespace lowcomm {

struct DctTopKOptions {
  std::int64_t topk = 32;        // coefficients kept per block
  std::int64_t chunk = 64;       // largest block side
  std::string wire = "reference";  // reference | compact | compact_1bit
  // When set, they replace the wire's (value_encoding.hpp, index_encoding.hpp).
  std::optional<std::string> value_type;
  std::int64_t bins = 4;
  double range = 6.0;
  std::optional<std::string> index_width;
  std::string exchange = "gather";  // gather | tree (merged up merge_schedule.hpp's tree)
};

// <prefix>.dct_topk.*, as the compressor reads them.
DctTopKOptions dct_topk_options(const Config& config, std::string_view prefix = "compressor");

}  // namespace lowcomm
