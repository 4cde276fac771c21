#pragma once
// Everything a training step keeps between the forward and the backward pass, and the backward
// pass's scratch, carved out of one allocation (two in bf16: the bf16 activations apart) made
// for a given (B, T) and reused while the
// batch shape stays the same, so a step allocates nothing.
#include <cstdint>
#include <span>
#include <vector>

#include "gpt/config.hpp"
#include "lowcomm/kernels/memory.hpp"
#include "lowcomm/kernels/precision.hpp"

namespace lowcomm::gpt {

// One stored activation: its fp32 values, or in a bf16 run its bf16 bits at half the memory (the
// kernels read them widened to fp32 and the forward pass computes from what is stored). The other
// of the two is empty.
struct Activation {
  std::span<float> fp32;
  std::span<std::uint16_t> bf16;
};

// A bf16 run stores as bf16 every activation that feeds a product, the attention or GELU; the
// residual stream, the layer norms' statistics and the logits stay fp32.
struct LayerActivations {
  Activation ln_1;                              // (N, C)
  std::span<float> ln_1_mean, ln_1_rstd;        // (N), (N)
  Activation qkv;                               // (N, 3C)
  Activation att;                               // (B, H, T, T) softmax probabilities
  Activation atty;                              // (N, C) attention output, before c_proj
  std::span<float> residual_2;                  // (N, C) input + attention branch
  Activation ln_2;                              // (N, C)
  std::span<float> ln_2_mean, ln_2_rstd;        // (N), (N)
  Activation fc;                                // (N, 4C) before GELU
  Activation fc_gelu;                           // (N, 4C) after GELU
  std::span<float> residual_3;                  // (N, C) the block's output
};

class Activations {
 public:
  // Allocates for B sequences of T tokens (N = B·T rows), in `backend`'s memory; with
  // Precision::Bf16 the Activation pieces in bf16.
  Activations(const GptConfig& config, std::int64_t B, std::int64_t T, kernels::Backend backend,
              kernels::Precision precision);
  std::int64_t B() const { return B_; }
  std::int64_t T() const { return T_; }

  std::span<float> embedded;  // (N, C): the residual stream entering block 0
  std::vector<LayerActivations> layers;
  Activation ln_f;                              // (N, C)
  std::span<float> ln_f_mean, ln_f_rstd;        // (N), (N)
  std::span<float> logits;                      // (N, V); the fused loss overwrites it with dlogits
  std::span<float> losses;                      // (N) per-token cross-entropy
  std::span<float> branch;                      // (N, C) a projection's output before the residual add
  // Backward scratch.
  std::span<float> d_residual;  // (N, C) gradient of the residual stream, walked down the blocks
  std::span<float> d_narrow;    // (N, C) dln / datty; in the forward pass, where a bf16 activation of
                                // this size is computed before it is rounded
  std::span<float> d_wide;      // (N, 4C) dfc; in the forward pass, the same for fc and fc_gelu
  std::span<float> d_qkv;       // (N, 3C); in the forward pass, the same for qkv
  std::span<float> d_att;       // (B, H, T, T)

  // The bytes these hold (for the memory a step needs).
  std::size_t bytes() const { return storage_.size() * sizeof(float) + half_storage_.size() * sizeof(std::uint16_t); }

 private:
  std::int64_t B_, T_;
  kernels::FloatBuffer storage_;
  kernels::HalfBuffer half_storage_;  // the Activation pieces of a bf16 run
};

}  // namespace lowcomm::gpt
