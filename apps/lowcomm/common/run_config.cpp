#include "run_config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "lowcomm/comm/config_agreement.hpp"
#include "lowcomm/config/compute_config.hpp"
#include "mpi_session.hpp"

namespace lowcomm::cli {

std::string key_sections(const ConfigSchema& schema) {
  std::vector<std::string> sections;
  for (const ConfigKey* key : schema.keys()) {
    const std::size_t dot = key->path.find('.');
    std::string section = dot == std::string::npos ? key->path : key->path.substr(0, dot) + ".*";
    if (std::find(sections.begin(), sections.end(), section) == sections.end()) sections.push_back(std::move(section));
  }
  std::string text;
  for (const std::string& section : sections) text += (text.empty() ? "" : ", ") + section;
  return text;
}

void add_config_arguments(CLI::App& command, ConfigArguments& arguments) {
  command.add_option("--config", arguments.file, "TOML configuration file (default: built-in defaults)");
  command.add_option("--set", arguments.overrides,
                     "override one key, e.g. --set network.scenario=consumer (repeatable)")
      ->type_name("KEY=VALUE")
      ->allow_extra_args(false);
}

void check_sections_agree(const Config& config) {
  // NCCL moves GPU memory: the model's buffers must be the CUDA backend's.
  if (config.has("comm.transport") && config.has("compute.backend") && config.get_string("comm.transport") == "nccl" &&
      config.get_string("compute.backend") != "cuda") {
    throw ConfigError(fmt::format("comm.transport = \"nccl\" moves GPU memory, but compute.backend = \"{}\" computes "
                                  "on the host: set compute.backend = \"cuda\", or comm.transport = \"mpi\"",
                                  config.get_string("compute.backend")));
  }
}

Config load_config_on_all_ranks(const ConfigArguments& arguments, const ConfigSchema& schema,
                                const ControlChannel& control) {
  std::optional<Config> config;
  agree_on_failure(control, [&] {
    config = arguments.file.empty() ? Config::defaults(schema, arguments.overrides)
                                    : Config::from_file(arguments.file, schema, arguments.overrides);
    check_sections_agree(*config);
  });
  agree_on_failure(control, [&] { require_identical_on_all_ranks(*config, control); });
  if (config->has("compute.threads")) use_compute_threads(*config);
  return std::move(*config);
}

}  // namespace lowcomm::cli
