#pragma once
// Block DCT-II of a tensor (REFERENCE.md §1 "DCT basis"), the transform DeMo selects its
// transmitted momentum components in. Every block X (h x w, cut as BlockLayout says) becomes
// Q = C_h · X · C_wᵀ with C_c the orthonormal DCT-II basis of length c, so decode(encode(x)) is x
// up to float rounding.
//
// Arithmetic (the reference does it in fp32, so do we): products and sums in float. Reference,
// the definition, starts each output's sum at 0 and takes it in ascending order of the summed
// index, in two passes:
//   encode: T[r][j] = Σ_c X[r][c]·C_w[j][c]      then  Q[i][j] = Σ_r C_h[i][r]·T[r][j]
//   decode: U[i][c] = Σ_j Q[i][j]·C_w[j][c]      then  X[r][c] = Σ_i C_h[i][r]·U[i][c]
// Cpu runs small tensors as per-block loops and larger ones a chunk of a block row at a time: the
// C_h pass by Lee's fast DCT (O(h log h) operations instead of h per element) where h is even with
// an odd part of at most 15 and at most 64 (DeMo's 64 x 64 blocks), else by a matrix product (the
// BLAS) split into even and odd basis rows (C[k][c-1-n] = (-1)^k C[k][n] halves the
// multiply-adds); the C_w pass by the matrix product, or, in a decode of coefficients as sparse as
// DeMo's, as each row's sum of the basis rows of its nonzero entries. It matches Reference within
// float rounding, not bitwise. It is deterministic: the same bits run to run and for every thread
// count (chunks and each chunk's method depend on the layout and that chunk's data only; each
// product runs on one thread).
// Error bounds. Reference, and any summation order of its sums: every output is within
// (h+w)·eps/2·‖block‖₂ of the exact transform with the float basis (‖block‖₂ the Frobenius norm
// of the input block). Typical differences are far smaller, of order sqrt(h+w)·eps·(block RMS +
// |value|); the tests hold Cpu to 4·sqrt(h+w+2)·eps·(block RMS + |value|) against Reference in
// the encode, and to 3 times that in the decode, where Lee's inverse amplifies rounding by its
// factors 1/(2 cos θ) (measured up to 2.1 times the encode's bound; kernels/cpu/fast_dct.hpp).
#include <cstdint>
#include <span>
#include <vector>

#include "lowcomm/kernels/backend_name.hpp"
#include "lowcomm/kernels/blocks.hpp"

namespace lowcomm::kernels {

// Row-major c x c orthonormal DCT-II basis: C[k][n] = sqrt((k == 0 ? 1 : 2) / c) ·
// cos(π(2n+1)k / (2c)), computed in double and rounded to float. Throws lowcomm::Error if c < 1.
std::vector<float> dct_basis(std::int64_t c);

// tensor: layout.size() floats, row-major batch x rows x cols.
// coefficients: layout.size() floats, block after block, each block row-major
// (coefficients[block · h·w + i·w + j]).
// Throws lowcomm::Error for an invalid layout, a span of the wrong size, or spans that overlap.
void dct_encode_blocks(Backend backend, const BlockLayout& layout, std::span<const float> tensor,
                       std::span<float> coefficients);

// The inverse of dct_encode_blocks: X = C_hᵀ · Q · C_w for every block, written back in tensor
// layout. Same arguments and errors, the roles of the two spans swapped.
void dct_decode_blocks(Backend backend, const BlockLayout& layout,
                       std::span<const float> coefficients, std::span<float> tensor);

}  // namespace lowcomm::kernels
