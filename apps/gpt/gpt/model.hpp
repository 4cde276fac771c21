#pragma once
// A GPT-2 style decoder for the transformer reference app: token + position embeddings, L
// pre-LayerNorm blocks (x + attn(ln_1(x)), then x + mlp(ln_2(x)), causal multi-head attention
// with a fused qkv projection, a 4C GELU MLP), a final LayerNorm and an LM head tied to wte;
// loss = mean softmax cross-entropy over all B·T positions. docs/model.md describes it.
//
// Parameters live in one contiguous float buffer and gradients in another with the same layout
// (gpt/parameters.hpp), in the backend's memory (lowcomm/kernels/memory.hpp: managed memory on
// CUDA, so they stay on the GPU between kernels), exposed as whole buffers, as one span per named tensor (what strategies
// and optimizers take) and as TensorInfo (name, shape). Activations are allocated on the first
// step of a given (B, T) and reused.
//
// Deterministic: the same parameters, inputs and thread count give bitwise the same loss and
// gradients (the kernels' reductions have fixed orders; OpenBLAS partitions statically).
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "gpt/activations.hpp"
#include "gpt/config.hpp"
#include "gpt/parameters.hpp"
#include "lowcomm/kernels/execution_context.hpp"
#include "lowcomm/kernels/memory.hpp"

namespace lowcomm::gpt {

class GptModel {
 public:
  // Validates config and initialises the parameters from seed (gpt/init.hpp). The kernels run on
  // execution.backend: Reference runs the plain loops (slow; for tests), Cpu the optimised ones,
  // Cuda the GPU's. execution.precision: the linear layers' and the LM head's products in fp32 or
  // with bf16 operands (kernels/precision.hpp).
  explicit GptModel(GptConfig config, std::uint64_t seed = 0, ExecutionContext execution = {});
  GptModel(const GptModel&) = delete;  // the spans point into this object's buffers
  GptModel& operator=(const GptModel&) = delete;

  const GptConfig& config() const { return config_; }
  kernels::Backend backend() const { return backend_; }
  const ParameterLayout& layout() const { return layout_; }
  const std::vector<TensorInfo>& tensors() const { return layout_.tensors(); }
  std::int64_t parameter_count() const { return layout_.total(); }

  // The whole buffers (layout order), and one span per tensor, in tensors() order.
  std::span<float> parameters() { return parameters_; }
  std::span<float> gradients() { return gradients_; }
  std::span<const std::span<float>> parameter_spans() const { return parameter_spans_; }
  std::span<const std::span<float>> gradient_spans() const { return gradient_spans_; }
  // The gradients as read-only spans, the form Optimizer::step takes.
  std::span<const std::span<const float>> gradient_views() const { return gradient_views_; }
  // One tensor by name (throws lowcomm::Error for an unknown name).
  std::span<float> parameter(std::string_view name) { return parameter_spans_[layout_.index(name)]; }
  std::span<float> gradient(std::string_view name) { return gradient_spans_[layout_.index(name)]; }

  // One training step's model work: zeroes the gradients, runs the forward and backward passes on
  // B sequences of T tokens (row-major B × T; targets[b,t] is the token to predict after
  // tokens[b,t]) and fills the gradients of the mean loss, which it returns. T ≤ context_length;
  // a token or target outside [0, vocab_size) throws lowcomm::Error naming the value.
  float forward_backward(std::span<const std::int32_t> tokens, std::span<const std::int32_t> targets,
                         int B, int T);
  // Gradient accumulation (train.micro_batches): zero_gradients(), then add_gradients for each
  // micro-batch, which adds the gradient of (sum of its tokens' losses) / total_tokens without
  // zeroing first and returns the micro-batch's mean loss. With total_tokens the tokens of all
  // micro-batches, the gradients are those of the mean loss over all of them (to float
  // rounding: the sums run in another order than one large batch's); forward_backward is
  // zero_gradients() + add_gradients(..., B·T).
  //
  // `gradients_finished`, when given, is called during the backward pass, on the calling thread,
  // each time some tensors' gradients are final (indices in tensors() order): ln_f's, then each
  // block's from the last to the first, then wte's and wpe's. A strategy can start sending them
  // (Strategy::gradients_ready); the training loop passes it for a step's last micro-batch.
  using GradientsFinished = std::function<void(std::span<const std::size_t>)>;
  void zero_gradients();
  float add_gradients(std::span<const std::int32_t> tokens, std::span<const std::int32_t> targets, int B, int T,
                      std::int64_t total_tokens, const GradientsFinished& gradients_finished = {});
  // The forward pass only (validation): the mean loss; gradients are left untouched.
  float loss(std::span<const std::int32_t> tokens, std::span<const std::int32_t> targets, int B, int T);
  // The logits (B·T × V) of the last loss() call (forward_backward reuses that memory for dlogits).
  std::span<const float> logits() const;
  // The bytes of activations held for the last batch shape (0 before the first pass). In bf16
  // the activations that feed products, the attention or GELU are stored as bf16 (activations.hpp),
  // which saves 2 bytes for each of their values.
  std::size_t activation_bytes() const { return activations_ ? activations_->bytes() : 0; }

  // Called on the calling thread after each transformer block of the forward and backward
  // passes (never inside a parallel region): the training loop lets collectives in flight make
  // progress there (Communicator::progress), as MPI moves them only inside MPI calls.
  void set_between_blocks(std::function<void()> hook) { between_blocks_ = std::move(hook); }

 private:
  void check_batch(std::span<const std::int32_t> tokens, std::span<const std::int32_t> targets,
                   int B, int T) const;
  Activations& activations_for(std::int64_t B, std::int64_t T);
  void forward(std::span<const std::int32_t> tokens, Activations& a);
  void backward(std::span<const std::int32_t> tokens, Activations& a, const GradientsFinished& gradients_finished);
  float mean_loss(const Activations& a) const;


  GptConfig config_;
  std::function<void()> between_blocks_;
  kernels::Backend backend_;
  kernels::Precision precision_;  // of the linear layers' products (train.precision)
  ParameterLayout layout_;
  kernels::FloatBuffer parameters_, gradients_;  // in the backend's memory (managed on CUDA)
  std::vector<std::span<float>> parameter_spans_, gradient_spans_;
  std::vector<std::span<const float>> gradient_views_;
  std::unique_ptr<Activations> activations_;
  bool logits_valid_ = false;
};

}  // namespace lowcomm::gpt
