#pragma once
// The one matrix product of the CPU kernels: every Cpu GEMM (kernels::gemm, so PowerSGD's
// products; the block DCT's products; the transformer's linear layers) goes through here: the
// BLAS chosen at configure time (cmake/LowcommBLAS.cmake: OpenBLAS on OpenMP's threads by
// default, or MKL, BLIS or a site's CBLAS through FindBLAS), else Eigen's product. Only blas.cpp
// sees cblas.h.
// Arguments are not checked here: the callers' kernels check their shapes.
#include <cstdint>

namespace lowcomm::kernels::detail {

// C (m × n) ← alpha · op(A) · op(B) + beta · C, all row-major; op(A) is m × k, stored k × m when
// transposed; op(B) is k × n, stored n × k when transposed. lda, ldb, ldc are the stored matrices'
// row strides (at least their column counts). beta = 0 ignores C's contents.
// Inside an active OpenMP parallel region OpenBLAS's OpenMP build and Eigen run the product on
// the calling thread alone (OpenBLAS's pthread build, which AUTO falls back to, does not check).
// Bits: the same run after run at one thread count. Across thread counts they can differ: both
// OpenBLAS and Eigen cut k differently when they thread, and OpenBLAS 0.3.21's Haswell kernels
// (seen on an AMD EPYC) change them even at k = 32, where k is not cut. So kernels that promise
// thread-independent bits call it inside their parallel region, one product per thread (the DCT),
// or, like PowerSGD's thin products, do not come here. Another CBLAS may promise less (MKL needs
// MKL_CBWR).
void sgemm(bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
           const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c,
           std::int64_t ldc);

// The dense case: every stored matrix's row stride is its column count.
inline void sgemm(bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n, std::int64_t k,
                  float alpha, const float* a, const float* b, float beta, float* c) {
  sgemm(transpose_a, transpose_b, m, n, k, alpha, a, transpose_a ? m : k, b, transpose_b ? k : n, beta, c, n);
}

// What computes it: OpenBLAS's configuration string, or "Eigen".
const char* sgemm_provider();

}  // namespace lowcomm::kernels::detail
