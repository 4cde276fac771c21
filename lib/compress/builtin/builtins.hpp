#pragma once
// The descriptions (name, parameters, factory) of the built-in compressors. Each declares its
// parameters once, as an options struct with its OptionsSchema.
#include "lowcomm/compress/registry.hpp"
#include "lowcomm/config/options_schema.hpp"

namespace lowcomm::builtin {

CompressorInfo none_compressor();
CompressorInfo randomk_compressor();
CompressorInfo topk_compressor();
CompressorInfo quantize_compressor();
CompressorInfo powersgd_compressor();
CompressorInfo dct_topk_compressor();
CompressorInfo sparseloco_compressor();
CompressorInfo majority_vote_compressor();

}  // namespace lowcomm::builtin
