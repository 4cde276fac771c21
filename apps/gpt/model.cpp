#include "gpt/model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "gpt/init.hpp"
#include "lowcomm/core/timeline.hpp"
#include "lowcomm/error.hpp"
#include "lowcomm/kernels/attention.hpp"
#include "lowcomm/kernels/backend.hpp"
#include "lowcomm/kernels/cross_entropy.hpp"
#include "lowcomm/kernels/elementwise.hpp"
#include "lowcomm/kernels/embedding.hpp"
#include "lowcomm/kernels/float16.hpp"
#include "lowcomm/kernels/gelu.hpp"
#include "lowcomm/kernels/layernorm.hpp"
#include "lowcomm/kernels/linear.hpp"
#include "lowcomm/kernels/residual.hpp"

namespace lowcomm::gpt {

using namespace lowcomm::kernels;

GptModel::GptModel(GptConfig config, std::uint64_t seed, ExecutionContext execution)
    : config_(config), backend_(execution.backend), precision_(execution.precision), layout_(config) {
  if (!has_model_kernels(backend_)) {
    // A backend this build offers has the compressors' kernels: say where it does run.
    const bool offered = std::ranges::find(available_backends(), backend_) != available_backends().end();
    throw ConfigError(fmt::format("the reference model has no {0} kernels: train with compute.backend = \"cpu\"{1}",
                                  to_string(backend_),
                                  offered ? fmt::format(" (the {} backend computes the compressors' kernels: use it "
                                                        "where no model runs, in lowcomm replay and lowcomm bench "
                                                        "compressors)", to_string(backend_))
                                          : std::string()));
  }
  parameters_ = FloatBuffer(backend_, static_cast<std::size_t>(layout_.total()));
  gradients_ = FloatBuffer(backend_, static_cast<std::size_t>(layout_.total()));
  parameter_spans_ = layout_.spans(parameters_.span());
  gradient_spans_ = layout_.spans(gradients_.span());
  gradient_views_.assign(gradient_spans_.begin(), gradient_spans_.end());
  initialize_parameters(layout_, config_.layers, seed, parameters_.span());
}

void GptModel::check_batch(std::span<const std::int32_t> tokens,
                           std::span<const std::int32_t> targets, int B, int T) const {
  if (B <= 0 || T <= 0) throw Error(fmt::format("GptModel: B and T must be > 0, got B = {}, T = {}", B, T));
  if (T > config_.context_length) {
    throw Error(fmt::format("GptModel: sequence length T = {} exceeds the context length {}", T,
                            config_.context_length));
  }
  const auto n = static_cast<std::size_t>(B) * static_cast<std::size_t>(T);
  if (tokens.size() != n || targets.size() != n) {
    throw Error(fmt::format("GptModel: B·T = {}·{} = {} positions, but {} tokens and {} targets",
                            B, T, n, tokens.size(), targets.size()));
  }
  // The kernels check too; checking here names the model's inputs in the message.
  for (std::size_t i = 0; i < n; ++i) {
    for (const auto& [what, value] : {std::pair{"token", tokens[i]}, std::pair{"target", targets[i]}}) {
      if (value < 0 || value >= config_.vocab_size) {
        throw Error(fmt::format("GptModel: {} {} at position {} (sequence {}, offset {}) is outside "
                                "the vocabulary [0, {})", what, value, i, i / static_cast<std::size_t>(T),
                                i % static_cast<std::size_t>(T), config_.vocab_size));
      }
    }
  }
}

namespace {

// Where a kernel that writes fp32 writes an activation: its fp32 storage, or `scratch` (fp32),
// which kept() then rounds into its bf16 storage.
std::span<float> written(const Activation& in, std::span<float> scratch) {
  if (in.bf16.empty()) return in.fp32;
  if (scratch.size() < in.bf16.size()) {
    throw Error("GptModel: the forward pass's scratch is smaller than an activation");
  }
  return scratch.first(in.bf16.size());
}

void kept(Backend backend, const Activation& in, std::span<const float> written) {
  if (!in.bf16.empty()) encode_values(backend, written, ValueType::BF16, std::as_writable_bytes(in.bf16));
}

void linear_forward_from(Backend backend, Precision precision, std::span<float> out, const Activation& in,
                         std::span<const float> weight, std::span<const float> bias, std::int64_t N, std::int64_t IC,
                         std::int64_t OC) {
  if (!in.bf16.empty()) {
    return linear_forward(backend, out, std::span<const std::uint16_t>(in.bf16), weight, bias, N, IC, OC);
  }
  linear_forward(backend, out, std::span<const float>(in.fp32), weight, bias, N, IC, OC, precision);
}

void linear_backward_from(Backend backend, Precision precision, std::span<float> dinp, std::span<float> dweight,
                          std::span<float> dbias, std::span<const float> dout, const Activation& in,
                          std::span<const float> weight, std::int64_t N, std::int64_t IC, std::int64_t OC) {
  if (!in.bf16.empty()) {
    return linear_backward(backend, dinp, dweight, dbias, dout, std::span<const std::uint16_t>(in.bf16), weight, N,
                           IC, OC);
  }
  linear_backward(backend, dinp, dweight, dbias, dout, std::span<const float>(in.fp32), weight, N, IC, OC, precision);
}

// The kernels that read an activation, called with its storage. qkv and att of one run are both
// fp32 or both bf16.
void attention_forward_from(Backend backend, std::span<float> out, const Activation& att, const Activation& qkv,
                            std::int64_t B, std::int64_t T, std::int64_t C, std::int64_t H) {
  if (!qkv.bf16.empty()) {
    return attention_forward(backend, out, att.bf16, std::span<const std::uint16_t>(qkv.bf16), B, T, C, H);
  }
  attention_forward(backend, out, att.fp32, std::span<const float>(qkv.fp32), B, T, C, H);
}

void attention_backward_from(Backend backend, std::span<float> dqkv, std::span<float> datt, std::span<const float> dout,
                             const Activation& qkv, const Activation& att, std::int64_t B, std::int64_t T,
                             std::int64_t C, std::int64_t H) {
  if (!qkv.bf16.empty()) {
    return attention_backward(backend, dqkv, datt, dout, std::span<const std::uint16_t>(qkv.bf16),
                              std::span<const std::uint16_t>(att.bf16), B, T, C, H);
  }
  attention_backward(backend, dqkv, datt, dout, std::span<const float>(qkv.fp32), std::span<const float>(att.fp32), B,
                     T, C, H);
}

void gelu_forward_from(Backend backend, std::span<float> out, const Activation& inp) {
  if (!inp.bf16.empty()) return gelu_forward(backend, out, std::span<const std::uint16_t>(inp.bf16));
  gelu_forward(backend, out, std::span<const float>(inp.fp32));
}

void gelu_backward_from(Backend backend, std::span<float> dinp, const Activation& inp, std::span<const float> dout) {
  if (!inp.bf16.empty()) return gelu_backward(backend, dinp, std::span<const std::uint16_t>(inp.bf16), dout);
  gelu_backward(backend, dinp, std::span<const float>(inp.fp32), dout);
}

}  // namespace

Activations& GptModel::activations_for(std::int64_t B, std::int64_t T) {
  if (!activations_ || activations_->B() != B || activations_->T() != T) {
    activations_.reset();  // free the old shape's memory before allocating the new one
    activations_ = std::make_unique<Activations>(config_, B, T, backend_, precision_);
  }
  return *activations_;
}

void GptModel::forward(std::span<const std::int32_t> tokens, Activations& a) {
  const std::int64_t B = a.B(), T = a.T(), N = B * T;
  const std::int64_t C = config_.width, V = config_.vocab_size, H = config_.heads;
  const auto& p = parameter_spans_;
  const auto linear = [&](std::span<float> out, const Activation& in, std::span<const float> weight,
                          std::span<const float> bias, std::int64_t IC, std::int64_t OC) {
    linear_forward_from(backend_, precision_, out, in, weight, bias, N, IC, OC);
  };
  embedding_forward(backend_, a.embedded, tokens, p[layout_.wte()], p[layout_.wpe()], B, T, C, V);
  std::span<const float> residual = a.embedded;
  for (std::int64_t l = 0; l < config_.layers; ++l) {
    LayerActivations& x = a.layers[static_cast<std::size_t>(l)];
    auto w = [&](BlockTensor which) { return std::span<const float>(p[layout_.block(l, which)]); };
    const std::span<float> ln_1 = written(x.ln_1, a.d_narrow);
    layernorm_forward(backend_, ln_1, x.ln_1_mean, x.ln_1_rstd, residual,
                      w(BlockTensor::ln_1_weight), w(BlockTensor::ln_1_bias), N, C);
    kept(backend_, x.ln_1, ln_1);
    const std::span<float> qkv = written(x.qkv, a.d_qkv);
    linear(qkv, x.ln_1, w(BlockTensor::c_attn_weight), w(BlockTensor::c_attn_bias), C, 3 * C);
    kept(backend_, x.qkv, qkv);
    const std::span<float> atty = written(x.atty, a.d_narrow);
    attention_forward_from(backend_, atty, x.att, x.qkv, B, T, C, H);
    kept(backend_, x.atty, atty);
    linear(a.branch, x.atty, w(BlockTensor::attn_c_proj_weight), w(BlockTensor::attn_c_proj_bias), C, C);
    residual_add(backend_, x.residual_2, residual, a.branch);
    const std::span<float> ln_2 = written(x.ln_2, a.d_narrow);
    layernorm_forward(backend_, ln_2, x.ln_2_mean, x.ln_2_rstd, x.residual_2,
                      w(BlockTensor::ln_2_weight), w(BlockTensor::ln_2_bias), N, C);
    kept(backend_, x.ln_2, ln_2);
    const std::span<float> fc = written(x.fc, a.d_wide);
    linear(fc, x.ln_2, w(BlockTensor::c_fc_weight), w(BlockTensor::c_fc_bias), C, 4 * C);
    kept(backend_, x.fc, fc);
    // GELU reads fc as stored, so in bf16 its fp32 scratch is free for GELU's output.
    const std::span<float> fc_gelu = written(x.fc_gelu, a.d_wide);
    gelu_forward_from(backend_, fc_gelu, x.fc);
    kept(backend_, x.fc_gelu, fc_gelu);
    linear(a.branch, x.fc_gelu, w(BlockTensor::mlp_c_proj_weight), w(BlockTensor::mlp_c_proj_bias), 4 * C, C);
    residual_add(backend_, x.residual_3, x.residual_2, a.branch);
    residual = x.residual_3;
    if (between_blocks_) between_blocks_();
  }
  const std::span<float> ln_f = written(a.ln_f, a.d_narrow);
  layernorm_forward(backend_, ln_f, a.ln_f_mean, a.ln_f_rstd, residual, p[layout_.ln_f_weight()],
                    p[layout_.ln_f_bias()], N, C);
  kept(backend_, a.ln_f, ln_f);
  // The LM head is wte itself: logits = ln_f · wteᵀ, no bias.
  linear(a.logits, a.ln_f, p[layout_.wte()], {}, C, V);
}

void GptModel::backward(std::span<const std::int32_t> tokens, Activations& a,
                        const GradientsFinished& gradients_finished) {
  const auto finished = [&](std::span<const std::size_t> tensors) {
    if (gradients_finished) gradients_finished(tensors);
  };
  const std::int64_t B = a.B(), T = a.T(), N = B * T;
  const std::int64_t C = config_.width, V = config_.vocab_size, H = config_.heads;
  const auto& p = parameter_spans_;
  const auto& g = gradient_spans_;
  // a.logits holds dlogits here (the fused loss wrote them in place).
  const auto linear = [&](std::span<float> dinp, std::span<float> dweight, std::span<float> dbias,
                          std::span<const float> dout, const Activation& in, std::span<const float> weight,
                          std::int64_t IC, std::int64_t OC) {
    linear_backward_from(backend_, precision_, dinp, dweight, dbias, dout, in, weight, N, IC, OC);
  };
  linear(a.d_narrow, g[layout_.wte()], {}, a.logits, a.ln_f, p[layout_.wte()], C, V);
  // The residual stream's gradient accumulates through every LayerNorm, so it starts at zero.
  fill(backend_, a.d_residual, 0.0f);
  const std::span<const float> last =
      config_.layers > 0 ? std::span<const float>(a.layers.back().residual_3) : a.embedded;
  layernorm_backward(backend_, a.d_residual, g[layout_.ln_f_weight()], g[layout_.ln_f_bias()],
                     a.d_narrow, last, p[layout_.ln_f_weight()], a.ln_f_mean, a.ln_f_rstd, N, C);
  finished(std::array{layout_.ln_f_weight(), layout_.ln_f_bias()});
  for (std::int64_t l = config_.layers - 1; l >= 0; --l) {
    LayerActivations& x = a.layers[static_cast<std::size_t>(l)];
    const std::span<const float> residual =
        l == 0 ? std::span<const float>(a.embedded) : a.layers[static_cast<std::size_t>(l - 1)].residual_3;
    auto w = [&](BlockTensor which) { return std::span<const float>(p[layout_.block(l, which)]); };
    auto dw = [&](BlockTensor which) { return g[layout_.block(l, which)]; };
    // MLP branch: d_residual is d(residual_3) and, unchanged, the gradient of the branch output.
    linear(a.d_wide, dw(BlockTensor::mlp_c_proj_weight), dw(BlockTensor::mlp_c_proj_bias), a.d_residual, x.fc_gelu,
           w(BlockTensor::mlp_c_proj_weight), 4 * C, C);
    gelu_backward_from(backend_, a.d_wide, x.fc, a.d_wide);
    linear(a.d_narrow, dw(BlockTensor::c_fc_weight), dw(BlockTensor::c_fc_bias), a.d_wide, x.ln_2,
           w(BlockTensor::c_fc_weight), C, 4 * C);
    // Adding ln_2's input gradient turns d_residual into d(residual_2).
    layernorm_backward(backend_, a.d_residual, dw(BlockTensor::ln_2_weight), dw(BlockTensor::ln_2_bias),
                       a.d_narrow, x.residual_2, w(BlockTensor::ln_2_weight), x.ln_2_mean,
                       x.ln_2_rstd, N, C);
    // Attention branch.
    linear(a.d_narrow, dw(BlockTensor::attn_c_proj_weight), dw(BlockTensor::attn_c_proj_bias), a.d_residual, x.atty,
           w(BlockTensor::attn_c_proj_weight), C, C);
    attention_backward_from(backend_, a.d_qkv, a.d_att, a.d_narrow, x.qkv, x.att, B, T, C, H);
    linear(a.d_narrow, dw(BlockTensor::c_attn_weight), dw(BlockTensor::c_attn_bias), a.d_qkv, x.ln_1,
           w(BlockTensor::c_attn_weight), C, 3 * C);
    // And ln_1's turns it into the gradient of the block's input.
    layernorm_backward(backend_, a.d_residual, dw(BlockTensor::ln_1_weight), dw(BlockTensor::ln_1_bias),
                       a.d_narrow, residual, w(BlockTensor::ln_1_weight), x.ln_1_mean, x.ln_1_rstd,
                       N, C);
    std::array<std::size_t, kTensorsPerBlock> block{};
    for (int k = 0; k < kTensorsPerBlock; ++k) block[static_cast<std::size_t>(k)] = layout_.block(l, BlockTensor{k});
    finished(block);
    if (between_blocks_) between_blocks_();
  }
  embedding_backward(backend_, g[layout_.wte()], g[layout_.wpe()], a.d_residual, tokens, B, T, C, V);
  finished(std::array{layout_.wte(), layout_.wpe()});
}

void GptModel::zero_gradients() { fill(backend_, gradients_.span(), 0.0f); }

float GptModel::mean_loss(const Activations& a) const {
  // Summed in double in index order: the mean does not depend on the thread count.
  double sum = 0.0;
  for (float loss : a.losses) sum += loss;
  return static_cast<float>(sum / static_cast<double>(a.losses.size()));
}

float GptModel::forward_backward(std::span<const std::int32_t> tokens,
                                 std::span<const std::int32_t> targets, int B, int T) {
  check_batch(tokens, targets, B, T);
  zero_gradients();
  return add_gradients(tokens, targets, B, T, std::int64_t{B} * T);
}

float GptModel::add_gradients(std::span<const std::int32_t> tokens, std::span<const std::int32_t> targets, int B,
                              int T, std::int64_t total_tokens, const GradientsFinished& gradients_finished) {
  check_batch(tokens, targets, B, T);
  const std::int64_t N = std::int64_t{B} * T;
  if (total_tokens < N) {
    throw Error(fmt::format("GptModel::add_gradients: total_tokens = {} is fewer than this micro-batch's {}",
                            total_tokens, N));
  }
  Activations& a = activations_for(B, T);
  {
    const TimelineScope span("compute", "forward");
    forward(tokens, a);
  }
  const TimelineScope span("compute", "backward");  // from the loss's gradient on
  cross_entropy_forward_backward(backend_, a.losses, a.logits, a.logits, targets, N,
                                 config_.vocab_size, 1.0f / static_cast<float>(total_tokens));
  logits_valid_ = false;
  backward(tokens, a, gradients_finished);
  return mean_loss(a);
}

float GptModel::loss(std::span<const std::int32_t> tokens, std::span<const std::int32_t> targets,
                     int B, int T) {
  check_batch(tokens, targets, B, T);
  Activations& a = activations_for(B, T);
  forward(tokens, a);
  cross_entropy_forward(backend_, a.losses, a.logits, targets, std::int64_t{B} * T, config_.vocab_size);
  logits_valid_ = true;
  return mean_loss(a);
}

std::span<const float> GptModel::logits() const {
  if (!logits_valid_ || !activations_) {
    throw Error("GptModel::logits: no logits to read; call loss() first (forward_backward "
                "overwrites them with their gradient)");
  }
  return activations_->logits;
}

}  // namespace lowcomm::gpt
