#pragma once
// Global-norm gradient clipping, as torch.nn.utils.clip_grad_norm_ (norm_type 2).
#include <span>

namespace lowcomm {

// Returns the L2 norm of all gradients together, as if concatenated, before clipping: squares
// summed in double, tensor by tensor, element by element (a fixed order, so every rank computes
// the same value). When norm > max_norm, every gradient is multiplied by
//   c = max_norm / (norm + 1e-6)             (torch 1.13: clip_coef, clamped to 1)
// computed in double and rounded once to float. torch computes the norm and c in fp32, so the
// scaled gradients may differ from torch's by an ulp.
// A NaN or infinite norm is returned and the gradients are left as they are: the caller decides
// (skip the step, stop the run); torch would scale them all to NaN. Throws lowcomm::Error when
// max_norm is negative or NaN.
double clip_by_global_norm(std::span<const std::span<float>> grads, double max_norm);

// The norm alone, computed as above.
double global_norm(std::span<const std::span<const float>> grads);

}  // namespace lowcomm
