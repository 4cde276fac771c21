#pragma once
// Where each of the model's parameter tensors lives in one contiguous float buffer. The same
// layout indexes the gradient buffer, so parameter i and gradient i are the same slice of two
// buffers, and a strategy can treat the whole model as one flat vector or as named tensors.
//
// Names, shapes and order are nanoGPT's named_parameters() (PyTorch nn.Linear stores its weight
// as (out_features, in_features)): wte (V, C), wpe (T_max, C), then per block i
// h.<i>.ln_1.weight/bias (C), h.<i>.attn.c_attn.weight (3C, C)/bias (3C),
// h.<i>.attn.c_proj.weight (C, C)/bias (C), h.<i>.ln_2.weight/bias (C),
// h.<i>.mlp.c_fc.weight (4C, C)/bias (4C), h.<i>.mlp.c_proj.weight (C, 4C)/bias (C), and last
// ln_f.weight/bias (C). The LM head is tied to wte and has no tensor of its own.
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "gpt/config.hpp"
#include "lowcomm/compress/unit.hpp"

namespace lowcomm::gpt {

// Index of each tensor in the layout, per block (kind + 12 · block) and for the globals.
enum class BlockTensor : int {
  ln_1_weight, ln_1_bias, c_attn_weight, c_attn_bias, attn_c_proj_weight, attn_c_proj_bias,
  ln_2_weight, ln_2_bias, c_fc_weight, c_fc_bias, mlp_c_proj_weight, mlp_c_proj_bias,
};
inline constexpr int kTensorsPerBlock = 12;

class ParameterLayout {
 public:
  explicit ParameterLayout(const GptConfig& config);  // validates config

  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  const std::vector<std::int64_t>& offsets() const { return offsets_; }  // in floats
  std::int64_t total() const { return total_; }                          // floats in the buffer

  // Position in tensors() of a name; throws lowcomm::Error naming it if there is no such tensor.
  std::size_t index(std::string_view name) const;
  std::size_t wte() const { return 0; }
  std::size_t wpe() const { return 1; }
  std::size_t block(std::int64_t layer, BlockTensor which) const {
    return 2 + static_cast<std::size_t>(layer) * kTensorsPerBlock + static_cast<std::size_t>(which);
  }
  std::size_t ln_f_weight() const { return tensors_.size() - 2; }
  std::size_t ln_f_bias() const { return tensors_.size() - 1; }

  // One span per tensor over `buffer` (which must hold total() floats).
  std::vector<std::span<float>> spans(std::span<float> buffer) const;

 private:
  std::vector<TensorInfo> tensors_;
  std::vector<std::int64_t> offsets_;
  std::int64_t total_ = 0;
};

}  // namespace lowcomm::gpt
