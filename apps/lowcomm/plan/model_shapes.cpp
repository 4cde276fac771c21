#include "plan/model_shapes.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <fstream>
#include <functional>

#include "gpt/config.hpp"
#include "gpt/parameters.hpp"
#include "lowcomm/error.hpp"
#include "lowcomm/log/gradient_trace.hpp"
#include "lowcomm/log/run_log.hpp"
#include "train/train_keys.hpp"

namespace lowcomm::cli {

namespace {

std::vector<TensorInfo> gpt_tensors(std::string_view preset) {
  return gpt::ParameterLayout(gpt::gpt_preset(preset)).tensors();
}

// OLMo (Groeneveld et al. 2024) as its repository names and shapes the parameters: a tied
// embedding padded to 50304 rows, per block a fused QKV projection (3d, d), the attention output
// (d, d), a fused SwiGLU input projection (2h, d) and its output (d, h) with h = mlp_ratio·d / 2;
// no biases, non-parametric layer norms.
std::vector<TensorInfo> olmo_tensors(std::int64_t d, std::int64_t layers, std::int64_t mlp_ratio) {
  const std::int64_t h = mlp_ratio * d / 2;
  std::vector<TensorInfo> tensors{{"transformer.wte.weight", {50304, d}}};
  for (std::int64_t i = 0; i < layers; ++i) {
    const std::string block = fmt::format("transformer.blocks.{}.", i);
    tensors.push_back({block + "att_proj.weight", {3 * d, d}});
    tensors.push_back({block + "attn_out.weight", {d, d}});
    tensors.push_back({block + "ff_proj.weight", {2 * h, d}});
    tensors.push_back({block + "ff_out.weight", {d, h}});
  }
  return tensors;
}

// A Llama-2-style decoder as Hugging Face names it: untied embedding and LM head, multi-head
// attention with separate q, k, v, o projections, a SwiGLU MLP, RMSNorm weights, no biases.
std::vector<TensorInfo> llama_tensors(std::int64_t vocab, std::int64_t d, std::int64_t layers, std::int64_t ffn) {
  std::vector<TensorInfo> tensors{{"model.embed_tokens.weight", {vocab, d}}};
  for (std::int64_t i = 0; i < layers; ++i) {
    const std::string layer = fmt::format("model.layers.{}.", i);
    tensors.push_back({layer + "input_layernorm.weight", {d}});
    for (const char* projection : {"q_proj", "k_proj", "v_proj", "o_proj"}) {
      tensors.push_back({fmt::format("{}self_attn.{}.weight", layer, projection), {d, d}});
    }
    tensors.push_back({layer + "post_attention_layernorm.weight", {d}});
    tensors.push_back({layer + "mlp.gate_proj.weight", {ffn, d}});
    tensors.push_back({layer + "mlp.up_proj.weight", {ffn, d}});
    tensors.push_back({layer + "mlp.down_proj.weight", {d, ffn}});
  }
  tensors.push_back({"model.norm.weight", {d}});
  tensors.push_back({"lm_head.weight", {vocab, d}});
  return tensors;
}

struct Preset {
  ModelPreset info;
  std::function<std::vector<TensorInfo>()> tensors;
};

const std::vector<Preset>& presets() {
  static const std::vector<Preset> all = [] {
    std::vector<Preset> list;
    for (const std::string_view name : gpt::gpt_preset_names()) {
      list.push_back({{name, "the reference model's preset (docs/model.md)"}, [name] { return gpt_tensors(name); }});
    }
    list.push_back({{"olmo-300m", "OLMo as the DeMo paper's 300M (assumed: d 1024, 16 layers, mlp_ratio 8; 319.9 M)"},
                    [] { return olmo_tensors(1024, 16, 8); }});
    list.push_back({{"olmo-1b", "OLMo-1B (d 2048, 16 layers, mlp_ratio 8, tied embedding; 1176.8 M)"},
                    [] { return olmo_tensors(2048, 16, 8); }});
    list.push_back({{"llama-1.2b", "DisTrO's report: Llama-2 style, 16 layers, hidden 2048, FFN 8192, vocab "
                                   "32000 (1204.9 M)"},
                    [] { return llama_tensors(32000, 2048, 16, 8192); }});
    return list;
  }();
  return all;
}

void check_tensors(const std::vector<TensorInfo>& tensors, std::string_view source) {
  if (tensors.empty()) throw ConfigError(fmt::format("{} lists no tensors", source));
  for (const TensorInfo& t : tensors) {
    if (t.name.empty()) throw ConfigError(fmt::format("{}: a tensor has an empty name", source));
    if (t.shape.empty()) throw ConfigError(fmt::format("{}: tensor '{}' has no dimensions", source, t.name));
    for (const std::int64_t n : t.shape) {
      if (n < 1) throw ConfigError(fmt::format("{}: tensor '{}' has a dimension of {}", source, t.name, n));
    }
  }
}

std::vector<TensorInfo> json_tensors(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) throw ConfigError(fmt::format("cannot read the model file {}", file.string()));
  const std::string source = fmt::format("model file {}", file.string());
  std::vector<TensorInfo> tensors;
  try {
    const nlohmann::json document = nlohmann::json::parse(in);
    const nlohmann::json& list = document.is_object() ? document.at("tensors") : document;
    if (!list.is_array()) throw ConfigError(fmt::format("{}: \"tensors\" must be a list", source));
    for (const nlohmann::json& entry : list) {
      tensors.push_back({entry.at("name").get<std::string>(), entry.at("shape").get<std::vector<std::int64_t>>()});
    }
  } catch (const nlohmann::json::exception& e) {
    throw ConfigError(fmt::format("{} is not a tensor list ({}): write {{\"tensors\": [{{\"name\": \"wte\", "
                                  "\"shape\": [50257, 768]}}, ...]}}",
                                  source, e.what()));
  }
  check_tensors(tensors, source);
  return tensors;
}

// The model a run folder trains: its config.toml (a sweep's point), else the configuration its
// log.h5 was started with (any `lowcomm train --out` folder).
std::vector<TensorInfo> run_folder_tensors(const std::filesystem::path& folder) {
  const std::filesystem::path file = folder / "config.toml";
  if (std::filesystem::exists(file)) {
    return gpt::ParameterLayout(model_config(Config::from_file(file.string(), train_schema()))).tensors();
  }
  const std::filesystem::path log = folder / "log.h5";
  if (std::filesystem::exists(log)) {
    if (const std::optional<std::string> text = read_run_config(log)) {
      const Config config = Config::from_string(*text, train_schema(), {}, log.string() + " (its config attribute)");
      return gpt::ParameterLayout(model_config(config)).tensors();
    }
    throw ConfigError(fmt::format("{} holds no configuration (no config attribute): is it a lowcomm run log?",
                                  log.string()));
  }
  throw ConfigError(fmt::format("{} is a folder with neither config.toml nor log.h5: give a lowcomm run folder",
                                folder.string()));
}

}  // namespace

std::vector<ModelPreset> model_presets() {
  std::vector<ModelPreset> names;
  for (const Preset& preset : presets()) names.push_back(preset.info);
  return names;
}

std::vector<TensorInfo> model_tensors(std::string_view model) {
  for (const Preset& preset : presets()) {
    if (preset.info.name == model) return preset.tensors();
  }
  const std::filesystem::path path(model);
  if (std::filesystem::is_directory(path)) return run_folder_tensors(path);
  if (path.extension() == ".json") return json_tensors(path);
  if (path.extension() == ".h5") {
    std::vector<TensorInfo> tensors = GradientTraceReader(path).tensors();
    check_tensors(tensors, fmt::format("gradient trace {}", path.string()));
    return tensors;
  }
  std::vector<std::string_view> names;
  for (const Preset& preset : presets()) names.push_back(preset.info.name);
  throw ConfigError(fmt::format("--model {}: not a preset ({}), a .json tensor list, a gradient trace (.h5) or a "
                                "run folder",
                                model, fmt::join(names, ", ")));
}

}  // namespace lowcomm::cli
