#pragma once
// Elementwise maps over float spans.
#include <span>

#include "lowcomm/kernels/backend.hpp"

namespace lowcomm::kernels {

// out[i] = +1 if in[i] > 0, -1 if in[i] < 0, else 0: sign(+0) = sign(-0) = +0 (REFERENCE.md §1,
// DeMo's x ← x − η·sign(G)), and sign(NaN) = +0 as in PyTorch's CPU torch.sign, so a NaN
// coefficient leaves its parameter where it is.
// in and out may be the same span (in-place); throws lowcomm::Error if their sizes differ or
// they overlap partially.
void sign(Backend backend, std::span<const float> in, std::span<float> out);

// out[i] = value for every i, on the backend (so a CUDA model zeroes its gradients on the GPU,
// where its managed buffers live, rather than pulling their pages to the host).
void fill(Backend backend, std::span<float> out, float value);

}  // namespace lowcomm::kernels
