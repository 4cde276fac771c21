#pragma once
// The local optimizers' element-wise updates (optim/adamw.hpp, sgd.hpp, signum.hpp), one kernel
// each, so that an optimizer's state can live in its backend's memory (managed memory on the GPU
// for Cuda, kernels/memory.hpp) and its update run where the parameters are. The optimizers own
// the options, the derivation of these scalars (in double, then rounded to fp32 as torch does)
// and the state; a kernel only applies one step to one span of elements (a tensor, or several
// back to back: the optimizers pass a model's flat buffers in one call).
//
// Every backend evaluates the same fp32 expressions in the same order with no fused multiply-add
// (kernels/optimizer_update_rules.hpp holds them once), so each gives the Reference's bits.
// Throws lowcomm::Error, modifying nothing, when the spans' sizes differ.
#include <span>

#include "lowcomm/kernels/backend_name.hpp"

namespace lowcomm::kernels {

// torch's _single_tensor_adamw (amsgrad off), with t the step count from 1:
//   p = p·decay                                   decay = 1 − lr·wd
//   m = β1·m + (1 − β1)·g
//   v = β2·v + ((1 − β2)·g)·g
//   p = p + (neg_step_size·m) / (sqrt(v) / bc2_sqrt + eps)
//                                                 neg_step_size = −lr / (1 − β1^t),
//                                                 bc2_sqrt = sqrt(1 − β2^t)
// (the decayed p is the one updated).
struct AdamWScalars {
  float decay, beta1, beta2, one_minus_beta1, one_minus_beta2, bc2_sqrt, eps, neg_step_size;
};
void adamw_update(Backend backend, const AdamWScalars& s, std::span<float> param, std::span<const float> grad,
                  std::span<float> exp_avg, std::span<float> exp_avg_sq);

// torch's _single_tensor_sgd: d = g, plus wd·p when `decays`; with `momentum`,
//   buf = first ? d : mu·buf + keep·d            (the first step copies, as torch's clone)
//   d = nesterov ? d + mu·buf : buf
// then p = p + neg_lr·d. `buffer` is the momentum, empty without `momentum`.
struct SgdScalars {
  float wd, mu, keep, neg_lr;
  bool decays, momentum, first, nesterov;
};
void sgd_update(Backend backend, const SgdScalars& s, std::span<float> param, std::span<const float> grad,
                std::span<float> buffer);

// Signum: m = β·m + (1 − β)·g; p = p·decay when `decays`; p = p + neg_lr·sign(m), where
// sign(±0) = 0 and a NaN stays NaN (torch.sign), so a NaN gradient shows in the parameters.
struct SignumScalars {
  float beta, one_minus_beta, decay, neg_lr;
  bool decays;
};
void signum_update(Backend backend, const SignumScalars& s, std::span<float> param, std::span<const float> grad,
                   std::span<float> momentum);

}  // namespace lowcomm::kernels
