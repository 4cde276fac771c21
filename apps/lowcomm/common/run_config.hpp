#pragma once
// --config FILE and --set key=value, shared by every subcommand that reads a configuration.
#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "lowcomm/comm/control_channel.hpp"
#include "lowcomm/config/config.hpp"

namespace lowcomm::cli {

struct ConfigArguments {
  std::string file;                    // empty: built-in defaults only
  std::vector<std::string> overrides;  // "section.key=value", applied after the file
};

void add_config_arguments(CLI::App& command, ConfigArguments& arguments);

// The sections of `schema`'s keys, for a --help footer: "cluster.*, comm.*, ..., seed" (a key
// outside any section by its name), so that a command's help names every section it reads.
std::string key_sections(const ConfigSchema& schema);

// Loads and validates the configuration on every rank, then checks that all ranks resolved the
// same one. A mistake stops every rank with one message (see agree_on_failure). A configuration
// with compute.threads then sets every rank's thread count (use_compute_threads).
// The rules that join two sections, which neither layer can check alone (comm.transport = nccl
// needs compute.backend = cuda). Throws ConfigError naming the keys.
void check_sections_agree(const Config& config);

Config load_config_on_all_ranks(const ConfigArguments& arguments, const ConfigSchema& schema,
                                const ControlChannel& control);

}  // namespace lowcomm::cli
