#pragma once
// Elementwise maps over float spans: the per-element arithmetic of the strategies and of error
// feedback (DeMo's η·g, its decayed momentum, the sign step), so that it runs where their state
// lives (kernels/memory.hpp: on the GPU for Cuda) instead of pulling its pages to the host.
//
// Every backend computes each element with the same fp32 operations in the same order and no
// fused multiply-add, so all give the Reference's bits. The output may be one of the inputs
// itself (in place); throws lowcomm::Error when the sizes differ or an input overlaps the output
// without being it.
#include <span>

#include "lowcomm/kernels/backend_name.hpp"

namespace lowcomm::kernels {

// out[i] = +1 if in[i] > 0, -1 if in[i] < 0, else 0: sign(+0) = sign(-0) = +0 (REFERENCE.md §1,
// DeMo's x ← x − η·sign(G)), and sign(NaN) = +0 as in PyTorch's CPU torch.sign, so a NaN
// coefficient leaves its parameter where it is.
void sign(Backend backend, std::span<const float> in, std::span<float> out);

// out[i] = value for every i, on the backend (so a CUDA model zeroes its gradients on the GPU,
// where its managed buffers live, rather than pulling their pages to the host).
void fill(Backend backend, std::span<float> out, float value);

// out[i] = alpha·in[i].
void scale(Backend backend, float alpha, std::span<const float> in, std::span<float> out);

// out[i] = alpha·a[i] + b[i], the product rounded before the sum (alpha = 1 gives a[i] + b[i]).
void scale_add(Backend backend, float alpha, std::span<const float> a, std::span<const float> b,
               std::span<float> out);

// out[i] = a[i] − b[i].
void subtract(Backend backend, std::span<const float> a, std::span<const float> b, std::span<float> out);

// x[i] = x[i] − alpha·sign(g[i]), with sign() above: DeMo's update x ← x − η·sign(G).
void subtract_scaled_sign(Backend backend, float alpha, std::span<const float> g, std::span<float> x);

}  // namespace lowcomm::kernels
