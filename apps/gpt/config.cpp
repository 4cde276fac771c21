#include "gpt/config.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <limits>

#include "lowcomm/error.hpp"

namespace lowcomm::gpt {
namespace {

struct Preset {
  std::string_view name;
  GptConfig config;
};

constexpr Preset kPresets[] = {
    {"tiny", {256, 128, 4, 4, 128}},
    {"small", {256, 256, 4, 4, 256}},
    {"gpt2-124m", {50257, 1024, 12, 12, 768}},
    {"gpt2-350m", {50257, 1024, 24, 16, 1024}},
    {"gpt2-774m", {50257, 1024, 36, 20, 1280}},
    {"gpt2-1.5b", {50257, 1024, 48, 25, 1600}},
};

}  // namespace

void GptConfig::validate() const {
  const std::pair<const char*, std::int64_t> sizes[] = {{"vocab_size", vocab_size},
                                                        {"context_length", context_length},
                                                        {"layers", layers},
                                                        {"heads", heads},
                                                        {"width", width}};
  for (const auto& [name, value] : sizes) {
    if (value <= 0) throw Error(fmt::format("GptConfig: {} must be > 0, got {}", name, value));
  }
  if (width % heads != 0) {
    throw Error(fmt::format("GptConfig: width {} must be divisible by heads {} (each head gets "
                            "width / heads channels)", width, heads));
  }
  if (vocab_size > std::numeric_limits<std::int32_t>::max()) {
    throw Error(fmt::format("GptConfig: vocab_size {} exceeds what int32 tokens can index", vocab_size));
  }
  // 2^40 floats (4 TiB) is far beyond any model this runs; the bound keeps every product below
  // (C·4C, V·C, B·T·V for sane batches) clear of int64 overflow.
  constexpr std::int64_t kLimit = std::int64_t{1} << 20;
  if (width > kLimit || vocab_size > (std::int64_t{1} << 31) || context_length > kLimit ||
      layers > kLimit) {
    throw Error(fmt::format("GptConfig: sizes too large (width, context_length and layers must be "
                            "≤ {})", kLimit));
  }
  if (parameter_count() > (std::int64_t{1} << 40)) {
    throw Error(fmt::format("GptConfig: {} parameters is too many", parameter_count()));
  }
}

std::int64_t GptConfig::parameter_count() const {
  const std::int64_t C = width;
  const std::int64_t per_layer = 2 * C            // ln_1
                                 + 3 * C * C + 3 * C  // attn.c_attn
                                 + C * C + C          // attn.c_proj
                                 + 2 * C              // ln_2
                                 + 4 * C * C + 4 * C  // mlp.c_fc
                                 + 4 * C * C + C;     // mlp.c_proj
  return vocab_size * C + context_length * C + layers * per_layer + 2 * C;
}

double GptConfig::training_flops_per_token(std::int64_t seq_len) const {
  const auto non_position = static_cast<double>(parameter_count() - context_length * width);
  return 6.0 * non_position + 12.0 * static_cast<double>(layers * width * seq_len);
}

GptConfig gpt_preset(std::string_view name) {
  for (const Preset& preset : kPresets) {
    if (preset.name == name) return preset.config;
  }
  throw Error(fmt::format("unknown model preset \"{}\"; the presets are: {}", name,
                          fmt::join(gpt_preset_names(), ", ")));
}

std::vector<std::string_view> gpt_preset_names() {
  std::vector<std::string_view> names;
  for (const Preset& preset : kPresets) names.push_back(preset.name);
  return names;
}

}  // namespace lowcomm::gpt
