#pragma once
// Everything a training step keeps between the forward and the backward pass, and the backward
// pass's scratch, carved out of one allocation made for a given (B, T) and reused while the
// batch shape stays the same, so a step allocates nothing.
#include <cstdint>
#include <span>
#include <vector>

#include "gpt/config.hpp"
#include "lowcomm/kernels/memory.hpp"

namespace lowcomm::gpt {

struct LayerActivations {
  std::span<float> ln_1, ln_1_mean, ln_1_rstd;  // (N, C), (N), (N)
  std::span<float> qkv;                         // (N, 3C)
  std::span<float> att;                         // (B, H, T, T) softmax probabilities
  std::span<float> atty;                        // (N, C) attention output, before c_proj
  std::span<float> residual_2;                  // (N, C) input + attention branch
  std::span<float> ln_2, ln_2_mean, ln_2_rstd;  // (N, C), (N), (N)
  std::span<float> fc, fc_gelu;                 // (N, 4C) before and after GELU
  std::span<float> residual_3;                  // (N, C) the block's output
};

class Activations {
 public:
  // Allocates for B sequences of T tokens (N = B·T rows), in `backend`'s memory.
  Activations(const GptConfig& config, std::int64_t B, std::int64_t T, kernels::Backend backend);
  std::int64_t B() const { return B_; }
  std::int64_t T() const { return T_; }

  std::span<float> embedded;  // (N, C): the residual stream entering block 0
  std::vector<LayerActivations> layers;
  std::span<float> ln_f, ln_f_mean, ln_f_rstd;  // (N, C), (N), (N)
  std::span<float> logits;                      // (N, V); the fused loss overwrites it with dlogits
  std::span<float> losses;                      // (N) per-token cross-entropy
  std::span<float> branch;                      // (N, C) a projection's output before the residual add
  // Backward scratch.
  std::span<float> d_residual;  // (N, C) gradient of the residual stream, walked down the blocks
  std::span<float> d_narrow;    // (N, C) dln / datty
  std::span<float> d_wide;      // (N, 4C) dfc
  std::span<float> d_qkv;       // (N, 3C)
  std::span<float> d_att;       // (B, H, T, T)

 private:
  std::int64_t B_, T_;
  kernels::FloatBuffer storage_;
};

}  // namespace lowcomm::gpt
