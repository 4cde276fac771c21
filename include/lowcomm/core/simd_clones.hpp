#pragma once
// Vector instructions without losing portability: a function marked LOWCOMM_SIMD_CLONES is
// compiled three times, for x86-64-v4 (AVX-512), x86-64-v3 (AVX2, FMA) and the baseline the
// release binary targets, and the dynamic loader binds the best one the CPU has (GCC's
// target_clones, an ifunc). Mark the hot loops only: a clone is a whole extra copy of the
// function. Elsewhere (another architecture, a compiler without target_clones for these levels:
// Clang 14, which the fuzzing build uses, knows no x86-64-vN there or in __builtin_cpu_supports)
// the macro is empty and the loop is compiled once for the baseline.
//
// The clones compute the same bits: lowcomm builds with -ffp-contract=off, so no clone fuses a
// multiply and an add that the baseline rounds twice (CMakeLists.txt). A plug-in can mark its own
// hot loops too; it then needs the same flag to keep that guarantee.
#include <string_view>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__ELF__)
#define LOWCOMM_SIMD_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#define LOWCOMM_HAVE_SIMD_CLONES 1
#else
#define LOWCOMM_SIMD_CLONES
#define LOWCOMM_HAVE_SIMD_CLONES 0
#endif

namespace lowcomm {

// The clone this CPU runs: "x86-64-v4 (AVX-512)", "x86-64-v3 (AVX2, FMA)", "x86-64 baseline",
// or "baseline (no run-time dispatch in this build)" (`lowcomm info` prints it).
std::string_view simd_clone_in_use();

}  // namespace lowcomm
