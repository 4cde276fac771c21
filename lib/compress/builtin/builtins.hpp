#pragma once
// What a built-in compressor's source includes: the registry and the options schema each declares
// its parameters with, and the description of every built-in, `CompressorInfo <name>_compressor()`
// for each builtin/<name>.cpp (the build lists them: builtin_compressors.inc).
#include "lowcomm/compress/registry.hpp"
#include "lowcomm/config/options_schema.hpp"

namespace lowcomm::builtin {

#define LOWCOMM_BUILTIN(name) CompressorInfo name##_compressor();
#include "builtin_compressors.inc"
#undef LOWCOMM_BUILTIN

}  // namespace lowcomm::builtin
