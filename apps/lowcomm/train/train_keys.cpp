#include "train_keys.hpp"

#include <fmt/format.h>

#include "lowcomm/comm/network_config.hpp"
#include "lowcomm/data/data_config.hpp"
#include "lowcomm/error.hpp"
#include "lowcomm/optim/lr_schedule.hpp"
#include "lowcomm/strategy/registry.hpp"

namespace lowcomm::cli {

void add_model_keys(ConfigSchema& schema) {
  std::vector<std::string> presets;
  for (std::string_view name : gpt::gpt_preset_names()) presets.emplace_back(name);
  schema.string("model.preset", "tiny", "GPT-2 style model size (docs/model.md)", presets);
  for (const char* key : {"layers", "heads", "width", "context_length", "vocab_size"}) {
    schema.add({.path = fmt::format("model.{}", key), .type = ValueType::Integer,
                .description = fmt::format("override the preset's {}", key), .min = 1.0, .optional = true});
  }
}

void add_loop_keys(ConfigSchema& schema) {
  schema.integer("seed", 0, "model initialisation and the seed shared by compressors", 0);
  schema.integer("train.steps", 200, "optimizer steps of the run", 1);
  schema.integer("train.micro_batches", 1,
                 "gradient accumulation: micro-batches of data.batch_size rows per rank and step, their "
                 "gradients averaged before the strategy runs once (the batch of data.batch_size x this)",
                 1);
  schema.real("train.grad_clip", 1.0, "clip each rank's local gradient to this global L2 norm (0: off)", 0.0);
  schema.integer("train.eval_every", 50, "validation loss every N steps, and after the last (0: only the last)", 0);
  schema.integer("train.checkpoint_every", 100,
                 "checkpoint every N steps, and after the last (0: only the last and on SIGTERM/SIGUSR1)", 0);
  schema.integer("train.keep_checkpoints", 1,
                 "checkpoints kept, the newest (a stop on NaN/Inf keeps every older one too)", 1);
  schema.integer("train.progress_every", 10, "progress line every N steps when stdout is not a terminal", 1);
  schema.string("train.precision", "fp32",
                "the model's precision: fp32, or bf16 (products of operands rounded to bfloat16 with fp32 "
                "accumulation, and the activations that feed products, the attention or GELU stored as bfloat16; "
                "fp32 residual stream, master weights, gradients and optimizer state; docs/model.md)",
                {"fp32", "bf16"});
  schema.string("train.nonfinite", "stop",
                "NaN or Inf in a loss or gradient: stop (checkpoint, exit 3) or skip the step",
                {"stop", "skip"});
}

ConfigSchema train_schema() {
  ConfigSchema schema;
  add_network_keys(schema);
  add_strategy_keys(schema, "adamw");
  add_schedule_keys(schema);
  add_data_keys(schema);
  add_model_keys(schema);
  add_loop_keys(schema);
  return schema;
}

gpt::GptConfig model_config(const Config& config) {
  gpt::GptConfig model = gpt::gpt_preset(config.get_string("model.preset"));
  const auto override_with = [&](const char* key, std::int64_t& field) {
    if (config.has(fmt::format("model.{}", key))) field = config.get_int(fmt::format("model.{}", key));
  };
  override_with("layers", model.layers);
  override_with("heads", model.heads);
  override_with("width", model.width);
  override_with("context_length", model.context_length);
  override_with("vocab_size", model.vocab_size);
  try {
    model.validate();
  } catch (const Error& e) {
    throw ConfigError(fmt::format("model (preset {} with the model.* overrides): {}",
                                  config.get_string("model.preset"), e.what()));
  }
  if (config.get_int("data.seq_len") > model.context_length) {
    throw ConfigError(fmt::format("data.seq_len = {} exceeds the model's context length {}: lower data.seq_len "
                                  "or raise model.context_length",
                                  config.get_int("data.seq_len"), model.context_length));
  }
  if (config.get_int("data.vocab_size") > model.vocab_size) {
    throw ConfigError(fmt::format("data.vocab_size = {} exceeds the model's vocabulary {}: raise "
                                  "model.vocab_size or choose another model.preset",
                                  config.get_int("data.vocab_size"), model.vocab_size));
  }
  return model;
}

}  // namespace lowcomm::cli
