#pragma once
// The shape of a GPT-2 style decoder, and the named presets the training command offers.
#include <cstdint>
#include <string_view>
#include <vector>

namespace lowcomm::gpt {

struct GptConfig {
  std::int64_t vocab_size = 0;      // V: tokens are 0 … V − 1
  std::int64_t context_length = 0;  // T_max: rows of the position table; a batch's T ≤ this
  std::int64_t layers = 0;          // L transformer blocks
  std::int64_t heads = 0;           // H attention heads; width % heads == 0
  std::int64_t width = 0;           // C, the residual stream's width (the MLP is 4C wide)

  std::int64_t head_size() const { return width / heads; }
  // Throws lowcomm::Error saying which field to change: non-positive sizes, a width not
  // divisible by the heads, a vocabulary that int32 tokens cannot index, or a model whose
  // parameter count overflows.
  void validate() const;
  // Parameters in the model (the LM head is tied to wte, so it is counted once).
  std::int64_t parameter_count() const;
  // Floating-point operations of one training token (forward and backward) at sequence length
  // `seq_len`: PaLM's estimate (arXiv 2204.02311, appendix B), 6 N + 12 L C T, with N the
  // parameters besides the position table (a lookup), as nanoGPT counts them.
  double training_flops_per_token(std::int64_t seq_len) const;
};

// "tiny" (V 256, T 128, L 4, H 4, C 128: 0.84 M parameters; for tests), "small" (V 256, T 256,
// L 4, H 4, C 256: 3.3 M; byte-level, for quick runs), "gpt2-124m" (V 50257, T 1024, L 12,
// H 12, C 768: GPT-2 small), and GPT-2's larger sizes "gpt2-350m" (L 24, H 16, C 1024),
// "gpt2-774m" (L 36, H 20, C 1280) and "gpt2-1.5b" (L 48, H 25, C 1600). An unknown name throws
// lowcomm::Error listing these.
GptConfig gpt_preset(std::string_view name);
std::vector<std::string_view> gpt_preset_names();

}  // namespace lowcomm::gpt
