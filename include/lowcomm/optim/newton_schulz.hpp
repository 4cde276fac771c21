#pragma once
// Muon's orthogonalisation (Keller Jordan's Muon, `zeropower_via_newtonschulz5`): the quintic
// Newton–Schulz iteration that maps a matrix G = U S Vᵀ to about U S' Vᵀ with S' near 1:
//   X = G / (‖G‖_F + 1e-7)
//   `steps` times: A = X Xᵀ;  B = b·A + c·A·A;  X ← a·X + B·X      (a, b, c) = (3.4445, −4.7750, 2.0315)
// on the wide orientation (the reference transposes a tall G first and back at the end; here a
// tall G iterates as A = XᵀX, X ← a·X + X·B, the same products transposed, so nothing is copied).
//
// In fp32 on `backend`'s GEMM (kernels/linalg.hpp), every product and sum in float; the
// reference iterates in bf16, which lands 2 to 9 % (rms) away from the fp32 result
// (docs/optimizers.md, "Muon"). The norm is summed on the host in double, so `matrix` must be
// host or managed memory (every optimizer buffer is).
#include <cstdint>
#include <span>

#include "lowcomm/kernels/backend_name.hpp"

namespace lowcomm {

struct NewtonSchulzCoefficients {
  float a = 3.4445f;
  float b = -4.7750f;
  float c = 2.0315f;
};

// The working memory of one orthogonalisation of a rows × cols matrix, in `backend`'s memory:
// sized by newton_schulz_scratch_size (2·rows·cols + 2·min(rows, cols)² floats).
std::size_t newton_schulz_scratch_size(std::int64_t rows, std::int64_t cols);

// matrix (row-major, rows × cols) ← its orthogonalisation after `steps` iterations. Throws
// lowcomm::Error when a size disagrees (the matrix's with rows·cols, the scratch's with
// newton_schulz_scratch_size) or a dimension is not positive.
void orthogonalize_newton_schulz(kernels::Backend backend, std::span<float> matrix, std::int64_t rows,
                                 std::int64_t cols, int steps, std::span<float> scratch,
                                 NewtonSchulzCoefficients coefficients = {});

}  // namespace lowcomm
