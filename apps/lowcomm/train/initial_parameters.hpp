#pragma once
// train.init_from: a fresh run that starts from another run's parameters (fine-tuning a
// pre-trained model) instead of the seed's initialisation. Only the parameters are taken: the
// optimizer and strategy start fresh, the step count starts at 0, and the log is the new run's.
#include <filesystem>
#include <span>

#include "lowcomm/comm/control_channel.hpp"
#include "lowcomm/config/config.hpp"

namespace lowcomm::cli {

// Collective: copies into `parameters` the flat parameters of the latest checkpoint of the run
// whose --out folder is `run_dir`, rank 0's file (the ranks of a data-parallel run hold the
// same), after checking that that run trained this model: the model its log's configuration
// resolves to (model_config) equals the one `config` resolves to. Throws ConfigError saying what
// is missing or differs: no such folder, a log without a configuration, another model shape, no
// checkpoint, a checkpoint without model/parameters or with another number of them.
void load_initial_parameters(const std::filesystem::path& run_dir, const Config& config,
                             const ControlChannel& control, std::span<float> parameters);

}  // namespace lowcomm::cli
