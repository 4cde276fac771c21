#include "train_keys.hpp"

#include <fmt/format.h>

#include <optional>
#include <utility>
#include <vector>

#include "lowcomm/comm/network_config.hpp"
#include "lowcomm/config/options_schema.hpp"
#include "lowcomm/data/data_config.hpp"
#include "lowcomm/error.hpp"
#include "lowcomm/optim/lr_schedule.hpp"
#include "lowcomm/strategy/registry.hpp"

namespace lowcomm::cli {

namespace {

// model.*: the preset and what overrides it (each unset by default).
struct ModelOptions {
  std::string preset = "tiny";
  std::optional<std::int64_t> layers, heads, width, context_length, vocab_size;
};

const OptionsSchema<ModelOptions>& model_schema() {
  static const auto schema = [] {
    std::vector<std::string> presets;
    for (std::string_view name : gpt::gpt_preset_names()) presets.emplace_back(name);
    return OptionsSchema<ModelOptions>()
        .field("preset", &ModelOptions::preset, "GPT-2 style model size (docs/model.md)", {.choices = presets})
        .field("layers", &ModelOptions::layers, "override the preset's layers", {.min = 1.0})
        .field("heads", &ModelOptions::heads, "override the preset's heads", {.min = 1.0})
        .field("width", &ModelOptions::width, "override the preset's width", {.min = 1.0})
        .field("context_length", &ModelOptions::context_length, "override the preset's context_length", {.min = 1.0})
        .field("vocab_size", &ModelOptions::vocab_size, "override the preset's vocab_size", {.min = 1.0});
  }();
  return schema;
}

const OptionsSchema<LoopOptions>& loop_schema() {
  static const auto schema =
      OptionsSchema<LoopOptions>()
          .field("steps", &LoopOptions::steps, "optimizer steps of the run", {.min = 1.0})
          .field("micro_batches", &LoopOptions::micro_batches,
                 "gradient accumulation: micro-batches of data.batch_size rows per rank and step, their gradients "
                 "averaged before the strategy runs once (the batch of data.batch_size x this)",
                 {.min = 1.0})
          .field("grad_clip", &LoopOptions::grad_clip,
                 "clip each rank's local gradient to this global L2 norm (0: off)", {.min = 0.0})
          .field("eval_every", &LoopOptions::eval_every,
                 "validation loss every N steps, and after the last (0: only the last)", {.min = 0.0})
          .field("checkpoint_every", &LoopOptions::checkpoint_every,
                 "checkpoint every N steps, and after the last (0: only the last and on SIGTERM/SIGUSR1)",
                 {.min = 0.0})
          .field("keep_checkpoints", &LoopOptions::keep_checkpoints,
                 "checkpoints kept, the newest (a stop on NaN/Inf keeps every older one too)", {.min = 1.0})
          .field("progress_every", &LoopOptions::progress_every,
                 "progress line every N steps when stdout is not a terminal", {.min = 1.0})
          .field("precision", &LoopOptions::precision,
                 "the model's precision: fp32, or bf16 (products of operands rounded to bfloat16 with fp32 "
                 "accumulation, and the activations that feed products, the attention or GELU stored as bfloat16; "
                 "fp32 residual stream, master weights, gradients and optimizer state; docs/model.md)",
                 {.choices = {"fp32", "bf16"}})
          .field("nonfinite", &LoopOptions::nonfinite,
                 "NaN or Inf in a loss or gradient: stop (checkpoint, exit 3) or skip the step",
                 {.choices = {"stop", "skip"}})
          .field("init_from", &LoopOptions::init_from,
                 "start from the parameters of another run's latest checkpoint (its --out folder; rank 0's "
                 "parameters, the same model.*; not its optimizer state, step or log), e.g. to fine-tune; "
                 "\"\": the seed's initialisation. A resumed run continues from its own checkpoint");
  return schema;
}

}  // namespace

void add_model_keys(ConfigSchema& schema) { model_schema().add_to(schema, "model"); }

void add_loop_keys(ConfigSchema& schema) {
  schema.integer("seed", 0, "model initialisation and the seed shared by compressors", 0);
  loop_schema().add_to(schema, "train");
  schema.string("experiment.method", "",
                "the method's name in the experiment file the run came from ([[sweep.method]] name; `lowcomm "
                "sweep` sets it): the log records it as the attribute `method` and the report labels the run "
                "with it. Changes nothing in the run");
}

LoopOptions loop_options(const Config& config) { return loop_schema().read(config, "train"); }

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
  const ModelOptions options = model_schema().read(config, "model");
  gpt::GptConfig model = gpt::gpt_preset(options.preset);
  for (const auto& [override_, field] : {std::pair{options.layers, &model.layers}, std::pair{options.heads, &model.heads},
                                         std::pair{options.width, &model.width},
                                         std::pair{options.context_length, &model.context_length},
                                         std::pair{options.vocab_size, &model.vocab_size}}) {
    if (override_) *field = *override_;
  }
  try {
    model.validate();
  } catch (const Error& e) {
    throw ConfigError(fmt::format("model (preset {} with the model.* overrides): {}", options.preset, e.what()));
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
