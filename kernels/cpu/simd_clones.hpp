#pragma once
// Vector instructions without losing portability: a function marked LOWCOMM_SIMD_CLONES is
// compiled three times, for x86-64-v4 (AVX-512), x86-64-v3 (AVX2, FMA) and the baseline the
// release binary targets, and the dynamic loader binds the best one the CPU has (GCC's and
// Clang's target_clones, an ifunc). Mark the hot loops only: a clone is a whole extra copy of the
// function. Elsewhere (another architecture, a compiler without target_clones) the macro is empty
// and the loop is compiled once for the baseline.
//
// Clones may round differently from one another where the compiler fuses a multiply and an add
// (FMA exists in v3 and v4 only), so floating-point kernels stay bitwise reproducible on one CPU
// model, not across models; integer and selection loops are identical on all three.
#include <string_view>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && defined(__ELF__)
#define LOWCOMM_SIMD_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#define LOWCOMM_HAVE_SIMD_CLONES 1
#else
#define LOWCOMM_SIMD_CLONES
#define LOWCOMM_HAVE_SIMD_CLONES 0
#endif

namespace lowcomm::kernels::detail {

// The clone this CPU runs, e.g. "x86-64-v4 (AVX-512)" (kernels::cpu_vector_path reports it).
std::string_view simd_clone_in_use();

}  // namespace lowcomm::kernels::detail
