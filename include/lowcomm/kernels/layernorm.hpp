#pragma once
// Layer normalisation over the last dimension (nn.LayerNorm(C), eps 1e-5 by default), row-major
// fp32 rows of C. The forward pass saves each row's mean and reciprocal standard deviation
// (1/sqrt(var + eps), var the biased variance, as PyTorch) for the backward pass.
//
// Reference sums in float in index order. Cpu sums each row with vectorised partial sums
// (differing from Reference by float rounding only) and reduces dweight/dbias over rows in row
// order with the columns split between threads, so its results do not depend on the thread count.
#include <cstdint>
#include <span>

#include "lowcomm/kernels/backend_name.hpp"

namespace lowcomm::kernels {

// out = (inp − mean) · rstd · weight + bias per row; mean and rstd hold N floats each.
void layernorm_forward(Backend backend, std::span<float> out, std::span<float> mean,
                       std::span<float> rstd, std::span<const float> inp,
                       std::span<const float> weight, std::span<const float> bias, std::int64_t N,
                       std::int64_t C, float eps = 1e-5f);

// Accumulates: dinp += ∂L/∂inp (so the gradient of a residual stream can flow through it
// unchanged), dweight += Σ_rows dout · x̂, dbias += Σ_rows dout, where x̂ = (inp − mean) · rstd.
void layernorm_backward(Backend backend, std::span<float> dinp, std::span<float> dweight,
                        std::span<float> dbias, std::span<const float> dout,
                        std::span<const float> inp, std::span<const float> weight,
                        std::span<const float> mean, std::span<const float> rstd, std::int64_t N,
                        std::int64_t C);

}  // namespace lowcomm::kernels
