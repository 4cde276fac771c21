#include "lowcomm/core/simd_clones.hpp"

namespace lowcomm {

std::string_view simd_clone_in_use() {
#if LOWCOMM_HAVE_SIMD_CLONES
  // The same order of preference as the loader's resolver: the first clone the CPU supports.
  __builtin_cpu_init();
  if (__builtin_cpu_supports("x86-64-v4")) return "x86-64-v4 (AVX-512)";
  if (__builtin_cpu_supports("x86-64-v3")) return "x86-64-v3 (AVX2, FMA)";
  return "x86-64 baseline";
#else
  return "baseline (no run-time dispatch in this build)";
#endif
}

}  // namespace lowcomm
