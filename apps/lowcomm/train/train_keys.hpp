#pragma once
// The configuration of `lowcomm train`: every section a run reads (network, strategy,
// optimizer, compressor, schedule, data) plus the model (model.*) and the loop (train.*, seed).
#include <cstdint>
#include <string>

#include "gpt/config.hpp"
#include "lowcomm/config/config.hpp"

namespace lowcomm::cli {

// train.*: the loop.
struct LoopOptions {
  std::int64_t steps = 200;
  std::int64_t micro_batches = 1;
  double grad_clip = 1.0;
  std::int64_t eval_every = 50;
  std::int64_t checkpoint_every = 100;
  std::int64_t keep_checkpoints = 1;
  std::int64_t progress_every = 10;
  std::string precision = "fp32";
  std::string nonfinite = "stop";
  std::string init_from;  // a run folder whose latest parameters a fresh run starts from ("": none)
};

void add_model_keys(ConfigSchema& schema);
void add_loop_keys(ConfigSchema& schema);  // train.*, seed and experiment.method
ConfigSchema train_schema();

// train.*, as the schema declares and checks it.
LoopOptions loop_options(const Config& config);

// model.preset with the model.* overrides applied; throws ConfigError naming the key.
gpt::GptConfig model_config(const Config& config);

}  // namespace lowcomm::cli
