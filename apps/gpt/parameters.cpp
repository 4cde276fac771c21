#include "gpt/parameters.hpp"

#include <fmt/format.h>

#include <string>

#include "lowcomm/error.hpp"

namespace lowcomm::gpt {

ParameterLayout::ParameterLayout(const GptConfig& config) {
  config.validate();
  const std::int64_t V = config.vocab_size, T = config.context_length, C = config.width;
  auto add = [&](std::string name, std::vector<std::int64_t> shape) {
    TensorInfo info{std::move(name), std::move(shape)};
    offsets_.push_back(total_);
    total_ += info.numel();
    tensors_.push_back(std::move(info));
  };
  add("wte", {V, C});
  add("wpe", {T, C});
  for (std::int64_t i = 0; i < config.layers; ++i) {
    const std::string h = fmt::format("h.{}.", i);
    add(h + "ln_1.weight", {C});
    add(h + "ln_1.bias", {C});
    add(h + "attn.c_attn.weight", {3 * C, C});
    add(h + "attn.c_attn.bias", {3 * C});
    add(h + "attn.c_proj.weight", {C, C});
    add(h + "attn.c_proj.bias", {C});
    add(h + "ln_2.weight", {C});
    add(h + "ln_2.bias", {C});
    add(h + "mlp.c_fc.weight", {4 * C, C});
    add(h + "mlp.c_fc.bias", {4 * C});
    add(h + "mlp.c_proj.weight", {C, 4 * C});
    add(h + "mlp.c_proj.bias", {C});
  }
  add("ln_f.weight", {C});
  add("ln_f.bias", {C});
}

std::size_t ParameterLayout::index(std::string_view name) const {
  for (std::size_t i = 0; i < tensors_.size(); ++i) {
    if (tensors_[i].name == name) return i;
  }
  throw Error(fmt::format("the model has no parameter tensor \"{}\" (names are as nanoGPT's: "
                          "wte, wpe, h.<i>.attn.c_attn.weight, …, ln_f.bias)", name));
}

std::vector<std::span<float>> ParameterLayout::spans(std::span<float> buffer) const {
  return tensor_views(buffer, tensors_);
}

}  // namespace lowcomm::gpt
