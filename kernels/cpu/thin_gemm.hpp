#pragma once
// The products of a big matrix with a thin one (PowerSGD's P = M·Q, Q = Mᵀ·P̂ and M̂ = P̂·Qᵀ at
// rank r ≤ kThinLimit): memory-bound, they cost what streaming the big matrix costs, and a BLAS
// packs that matrix into its own layout first (a second pass over it: measured 2.5× slower than
// these loops on 768×3072 at rank 2). Each reads or writes the big matrix once, on the rank's
// OpenMP threads, with the same bits at every thread count and in every SIMD clone. Same
// arguments and result as detail::sgemm (blas.hpp), for the shapes thin_shape recognises.
#include <cstdint>

namespace lowcomm::kernels::detail {

inline constexpr std::int64_t kThinLimit = 8;

// Which of the three thin shapes C = alpha·op(A)·op(B) + beta·C is, if any.
enum class ThinShape {
  None,
  FewColumns,            // A (m × k) · B (k × n), n ≤ kThinLimit: P = M·Q
  FewColumnsTransposed,  // Aᵀ (A stored k × m) · B (k × n), n ≤ kThinLimit: Q = Mᵀ·P̂
  FewInner,              // A (m × k) · Bᵀ (B stored n × k), k ≤ kThinLimit: M̂ = P̂·Qᵀ
};
ThinShape thin_shape(bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n, std::int64_t k);

// Sums: FewColumns accumulates each entry in 16 interleaved partial sums (p mod 16) added up in a
// fixed order at the end; FewColumnsTransposed and FewInner sum over k in index order, as the
// Reference does (so they match it bitwise).
void thin_product(ThinShape shape, std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* a,
                  const float* b, float beta, float* c);

// feedback_product (linalg.hpp) in one pass over the rows: its reconstruction as FewInner sums it,
// its product with Q as FewColumns does, so the bits are those of the unfused sequence on Cpu.
void feedback_product(std::int64_t rows, std::int64_t cols, std::int64_t last_rank, const float* last_p,
                      const float* last_q, float decay, const float* gradient, float* corrected, std::int64_t rank,
                      const float* q, float* p);

}  // namespace lowcomm::kernels::detail
