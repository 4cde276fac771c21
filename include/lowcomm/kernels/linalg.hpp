#pragma once
// Dense linear algebra for PowerSGD (REFERENCE.md §3): the Gram-Schmidt step of the paper's code,
// a row-major GEMM, and PowerSGD's first product with error feedback fused into it. Matrices are
// row-major fp32 spans whose sizes are checked against the dimensions; a mismatch, a negative
// dimension or a bad epsilon throws lowcomm::Error.
//
// Unlike the encoders these are reductions, so Cpu and Reference agree within a float tolerance,
// not bitwise (each says which). Both are deterministic run to run; Reference is the definition.
#include <cstdint>
#include <span>

#include "lowcomm/kernels/backend_name.hpp"

namespace lowcomm::kernels {

// Orthonormalises the columns p_0 … p_{cols−1} of the row-major rows × cols `matrix` in place,
// in order, exactly as the PowerSGD paper's code:
//   for i: p_i ← p_i / (‖p_i‖ + epsilon); for j > i: p_j ← p_j − ⟨p_i, p_j⟩ p_i
// (the projections use the already normalised p_i and the current p_j, i.e. modified
// Gram-Schmidt). A zero column stays zero instead of dividing by zero; epsilon must be finite
// and > 0. Reference accumulates every norm and dot product in float, in row order. PyTorch's
// fp32 torch.sum on CPU uses a vectorised cascade summation instead, so neither backend matches
// it bitwise; both match it within float rounding. Cpu sums fixed blocks of rows in float and
// adds the block sums in block order (so the result does not depend on the thread count); that
// order is its only difference from Reference, a relative difference of order
// sqrt(rows)·2^−24 per column for well-conditioned input (more when columns are nearly dependent,
// as for any Gram-Schmidt).
void orthonormalize_columns(Backend backend, std::span<float> matrix, std::int64_t rows,
                            std::int64_t cols, float epsilon = 1e-8f);

// C ← alpha · op(A) · op(B) + beta · C, all row-major: op(A) is m × k (A is stored k × m when
// transpose_a), op(B) is k × n (B is stored n × k when transpose_b), C is m × n. As in BLAS,
// beta == 0 overwrites C without reading it (NaNs there do not propagate) and k == 0 gives
// beta · C. Reference: for each C entry a float sum over k in index order. Cpu: the library's
// BLAS (OpenBLAS, else Eigen) on OpenMP's threads, except three thin shapes (PowerSGD's factors),
// which stream the big matrix once in loops of their own and give the same bits at every thread
// count: A·B and Aᵀ·B with n ≤ 8, and A·Bᵀ with k ≤ 8. Through the BLAS the bits repeat at a
// given thread count but may change with it (OpenBLAS 0.3.21's Haswell kernels on an AMD EPYC
// change them even at k = 32); called inside an active OpenMP parallel region, the BLAS runs the
// product on the calling thread alone, and the bits no longer depend on the thread count (the DCT
// runs its products so). Cpu's sums differ from
// Reference's by float rounding: |C_cpu − C_ref| ≤ 1e-5·sqrt(k)·(|alpha|·(|op(A)|·|op(B)|) +
// |beta·C|) entrywise is what the tests require (the expected rounding error of either is about
// sqrt(k)·2^−24 of that magnitude).
void gemm(Backend backend, bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n,
          std::int64_t k, float alpha, std::span<const float> a, std::span<const float> b,
          float beta, std::span<float> c);

// The largest rank feedback_product takes (that of gemm's thin shapes on Cpu).
inline constexpr std::int64_t kFeedbackProductMaxRank = 8;

// PowerSGD's error feedback fused into its first product (lib/compress/builtin/powersgd.cpp), in
// one pass over the rows × cols matrix `corrected`, which holds last step's corrected gradient on
// entry and this step's on return:
//   corrected ← decay·(corrected − last_p·last_qᵀ) + gradient     (last_p: rows × last_rank,
//   p ← corrected · q                                               last_q: cols × last_rank,
//                                                                   q: cols × rank, p: rows × rank)
// i.e. last step's residual (its corrected input less the reconstruction it transmitted), decayed
// and added to this step's gradient, then multiplied by Q. Each element is computed with the
// operations, and each sum in the order, of the same backend's unfused sequence
//   gemm(false, true, rows, cols, last_rank, 1, last_p, last_q, 0, r)   r = last_p·last_qᵀ
//   subtract(corrected, r, r); scale_add(decay, r, gradient, corrected)
//   gemm(false, false, rows, rank, cols, 1, corrected, q, 0, p)
// so the two give the same bits (the test checks it), at every thread count. The fused pass crosses
// the big matrices three times (two reads, one write) where the sequence crosses them eight times. Ranks are 1 to
// kFeedbackProductMaxRank. Reference and Cpu only: elsewhere `implements(backend,
// "feedback_product")` is false and the call throws (PowerSGD then runs the unfused sequence).
void feedback_product(Backend backend, std::int64_t rows, std::int64_t cols, std::int64_t last_rank,
                      std::span<const float> last_p, std::span<const float> last_q, float decay,
                      std::span<const float> gradient, std::span<float> corrected, std::int64_t rank,
                      std::span<const float> q, std::span<float> p);

}  // namespace lowcomm::kernels
