// The compressors that ship with lowcomm: one per builtin/<name>.cpp, found by the build
// (cmake/LowcommBuiltins.cmake), registered on the global registry's first use.
#include "builtin/builtins.hpp"

namespace lowcomm {

void register_builtin_compressors(CompressorRegistry& registry) {
#define LOWCOMM_BUILTIN(name) registry.add(builtin::name##_compressor());
#include "builtin_compressors.inc"
#undef LOWCOMM_BUILTIN
}

}  // namespace lowcomm
