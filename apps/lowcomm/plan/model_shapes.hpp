#pragma once
// The tensors whose traffic `lowcomm plan` prices, from one of:
//   - a preset: the reference model's GPT-2 presets (gpt/config.hpp), and the published
//     models of REFERENCE.md §5 (OLMo 300M and 1B as the DeMo paper trained them, the
//     Llama-2-style 1.2B model of DisTrO's report), listed by model_presets();
//   - a JSON file: {"tensors": [{"name": "wte", "shape": [50257, 768]}, ...]} (or the bare
//     list), e.g. from PyTorch: [{"name": n, "shape": list(p.shape)} for n, p in
//     model.named_parameters()];
//   - a gradient trace (.h5, log/gradient_trace.hpp): its tensors;
//   - a lowcomm run folder: the model its config.toml (a sweep's point) trains, or, without one,
//     the model of the configuration its log.h5 was started with (any `lowcomm train --out`).
#include <string>
#include <string_view>
#include <vector>

#include "lowcomm/core/tensor.hpp"

namespace lowcomm::cli {

struct ModelPreset {
  std::string_view name;
  std::string_view description;  // what it is and where its shape comes from
};
std::vector<ModelPreset> model_presets();

// Throws ConfigError saying what to change: an unknown preset (listing them), a missing or
// malformed file, a tensor with an empty name, no dimensions or a dimension below 1.
std::vector<TensorInfo> model_tensors(std::string_view model);

}  // namespace lowcomm::cli
