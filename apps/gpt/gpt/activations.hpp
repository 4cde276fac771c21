#pragma once
// Everything a training step keeps between the forward and the backward pass, and the backward
// pass's scratch, carved out of one allocation (two in bf16: the linear layers' inputs apart) made
// for a given (B, T) and reused while the
// batch shape stays the same, so a step allocates nothing.
#include <cstdint>
#include <span>
#include <vector>

#include "gpt/config.hpp"
#include "lowcomm/kernels/memory.hpp"
#include "lowcomm/kernels/precision.hpp"

namespace lowcomm::gpt {

// An activation that feeds only matrix products (a linear layer's input): its fp32 values, or in a
// bf16 run, whose products round it to bf16 anyway, its bf16 bits at half the memory. The other
// of the two is empty.
struct ProductInput {
  std::span<float> fp32;
  std::span<std::uint16_t> bf16;
};

struct LayerActivations {
  ProductInput ln_1;                            // (N, C)
  std::span<float> ln_1_mean, ln_1_rstd;        // (N), (N)
  std::span<float> qkv;                         // (N, 3C)
  std::span<float> att;                         // (B, H, T, T) softmax probabilities
  ProductInput atty;                            // (N, C) attention output, before c_proj
  std::span<float> residual_2;                  // (N, C) input + attention branch
  ProductInput ln_2;                            // (N, C)
  std::span<float> ln_2_mean, ln_2_rstd;        // (N), (N)
  std::span<float> fc;                          // (N, 4C) before GELU
  ProductInput fc_gelu;                         // (N, 4C) after GELU
  std::span<float> residual_3;                  // (N, C) the block's output
};

class Activations {
 public:
  // Allocates for B sequences of T tokens (N = B·T rows), in `backend`'s memory; with
  // Precision::Bf16 the product inputs in bf16.
  Activations(const GptConfig& config, std::int64_t B, std::int64_t T, kernels::Backend backend,
              kernels::Precision precision);
  std::int64_t B() const { return B_; }
  std::int64_t T() const { return T_; }

  std::span<float> embedded;  // (N, C): the residual stream entering block 0
  std::vector<LayerActivations> layers;
  ProductInput ln_f;                            // (N, C)
  std::span<float> ln_f_mean, ln_f_rstd;        // (N), (N)
  std::span<float> logits;                      // (N, V); the fused loss overwrites it with dlogits
  std::span<float> losses;                      // (N) per-token cross-entropy
  std::span<float> branch;                      // (N, C) a projection's output before the residual add
  // Backward scratch.
  std::span<float> d_residual;  // (N, C) gradient of the residual stream, walked down the blocks
  std::span<float> d_narrow;    // (N, C) dln / datty; in the forward pass, where a bf16 product input is
                                // computed before it is rounded
  std::span<float> d_wide;      // (N, 4C) dfc; in the forward pass, the same for fc_gelu
  std::span<float> d_qkv;       // (N, 3C)
  std::span<float> d_att;       // (B, H, T, T)

  // The bytes these hold (for the memory a step needs).
  std::size_t bytes() const { return storage_.size() * sizeof(float) + half_storage_.size() * sizeof(std::uint16_t); }

 private:
  std::int64_t B_, T_;
  kernels::FloatBuffer storage_;
  kernels::HalfBuffer half_storage_;  // the product inputs of a bf16 run
};

}  // namespace lowcomm::gpt
