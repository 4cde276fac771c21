#pragma once
// The one matrix product of the CPU kernels: every Cpu GEMM (kernels::gemm, so PowerSGD's
// products, and the transformer's linear layers) goes through here. With OpenBLAS found at
// configure time (cmake/LowcommOpenBLAS.cmake) this is cblas_sgemm on OpenMP's threads; without,
// Eigen's product. Only blas.cpp sees cblas.h. (The DCT keeps its own Eigen kernel: dct.cpp says
// why.) Arguments are not checked here: the callers' kernels check their shapes.
#include <cstdint>

namespace lowcomm::kernels::detail {

// C (m × n) ← alpha · op(A) · op(B) + beta · C, all row-major and dense; op(A) is m × k, stored
// k × m when transposed; op(B) is k × n, stored n × k when transposed. beta = 0 ignores C's contents.
void sgemm(bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
           const float* a, const float* b, float beta, float* c);

// What computes it: OpenBLAS's configuration string, or "Eigen".
const char* sgemm_provider();

}  // namespace lowcomm::kernels::detail
