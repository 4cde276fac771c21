#pragma once
// What `train --resume` may change, and the configuration it continues with: the one the run's
// log holds (docs/training.md, "Stopping, resuming, requeueing"), so that `--resume` alone
// continues a run; `--set` beside it may change only the keys that leave the steps already
// computed as they were.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "lowcomm/comm/control_channel.hpp"
#include "lowcomm/config/config.hpp"
#include "common/run_config.hpp"

namespace lowcomm::cli {

// The keys that may change when a run is resumed: its length, how often it reports, how many
// checkpoints it keeps, the remedies for a run stopped by NaN/Inf (the peak learning rate,
// clipping, the NaN policy), where it computes and what moves its data (a checkpoint is the same
// on every backend and transport, so a GPU run resumes on a CPU build), and the method's name.
// Each with a value of its type that stands in for the run's where configurations are compared.
const std::vector<ConfigSetting>& resumable_keys();

// "a, b, ... and z": the keys above, for messages.
std::string resumable_key_list();

// The identity a checkpoint records: the configuration without the resumable keys. Keys at their
// defaults do not count (hash_of_changes), so a later build with more keys still resumes the run.
std::int64_t resumable_hash(const Config& config);

// The run's configuration on every rank (collective; a mistake stops every rank with one message):
// - with --resume, no --config, and a log.h5 in the run folder: the configuration the log holds
//   (its latest resumption's), with the --set options applied, each of which may change only a
//   resumable key (ConfigError naming the others);
// - otherwise --config and --set as for a fresh run (the checkpoint then refuses a configuration
//   that differs from the run's).
Config train_configuration(const ConfigArguments& arguments, bool resume, const std::filesystem::path& run_dir,
                           const ControlChannel& control);

}  // namespace lowcomm::cli
