#pragma once
// The configuration of `lowcomm train`: every section a run reads (network, strategy,
// optimizer, compressor, schedule, data) plus the model (model.*) and the loop (train.*, seed).
#include "gpt/config.hpp"
#include "lowcomm/config/config.hpp"

namespace lowcomm::cli {

void add_model_keys(ConfigSchema& schema);
void add_loop_keys(ConfigSchema& schema);
ConfigSchema train_schema();

// model.preset with the model.* overrides applied; throws ConfigError naming the key.
gpt::GptConfig model_config(const Config& config);

}  // namespace lowcomm::cli
