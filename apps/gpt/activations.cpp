#include "gpt/activations.hpp"

namespace lowcomm::gpt {

Activations::Activations(const GptConfig& config, std::int64_t B, std::int64_t T, kernels::Backend backend,
                         kernels::Precision precision)
    : B_(B), T_(T) {
  const std::int64_t N = B * T, C = config.width, V = config.vocab_size;
  const std::int64_t att = B * config.heads * T * T;
  // Two passes over the same list of sizes: count, then hand out spans of the allocations.
  std::int64_t used = 0;
  bool carve = false;
  // Each piece starts on a 256-byte boundary (64 floats), as the buffer does, so a tensor's
  // alignment does not depend on B, T or the pieces before it (vector loops and the GPU's GEMMs
  // pick their code by it).
  constexpr std::int64_t kPieceAlignment = 64;
  auto take = [&](std::int64_t count) {
    std::span<float> out;
    if (carve) out = storage_.span().subspan(static_cast<std::size_t>(used), static_cast<std::size_t>(count));
    used += (count + kPieceAlignment - 1) / kPieceAlignment * kPieceAlignment;
    return out;
  };
  // The Activation pieces: fp32, or in bf16 pieces of the second allocation (128 values: 256 bytes).
  const bool bf16 = precision == kernels::Precision::Bf16;
  std::int64_t used_half = 0;
  auto take_activation = [&](std::int64_t count) {
    Activation in;
    if (!bf16) {
      in.fp32 = take(count);
      return in;
    }
    if (carve) {
      in.bf16 = half_storage_.span().subspan(static_cast<std::size_t>(used_half), static_cast<std::size_t>(count));
    }
    used_half += (count + 2 * kPieceAlignment - 1) / (2 * kPieceAlignment) * (2 * kPieceAlignment);
    return in;
  };
  layers.resize(static_cast<std::size_t>(config.layers));
  for (int pass = 0; pass < 2; ++pass) {
    carve = pass == 1;
    if (carve) {
      storage_ = kernels::FloatBuffer(backend, static_cast<std::size_t>(used));
      if (bf16) half_storage_ = kernels::HalfBuffer(backend, static_cast<std::size_t>(used_half));
    }
    used = 0;
    used_half = 0;
    embedded = take(N * C);
    for (LayerActivations& l : layers) {
      l.ln_1 = take_activation(N * C);
      l.ln_1_mean = take(N);
      l.ln_1_rstd = take(N);
      l.qkv = take_activation(N * 3 * C);
      l.att = take_activation(att);
      l.atty = take_activation(N * C);
      l.residual_2 = take(N * C);
      l.ln_2 = take_activation(N * C);
      l.ln_2_mean = take(N);
      l.ln_2_rstd = take(N);
      l.fc = take_activation(N * 4 * C);
      l.fc_gelu = take_activation(N * 4 * C);
      l.residual_3 = take(N * C);
    }
    ln_f = take_activation(N * C);
    ln_f_mean = take(N);
    ln_f_rstd = take(N);
    logits = take(N * V);
    losses = take(N);
    branch = take(N * C);
    d_residual = take(N * C);
    d_narrow = take(N * C);
    d_wide = take(N * 4 * C);
    d_qkv = take(N * 3 * C);
    d_att = take(att);
  }
}

}  // namespace lowcomm::gpt
