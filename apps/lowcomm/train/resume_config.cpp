#include "resume_config.hpp"

#include <fmt/format.h>

#include <optional>

#include "lowcomm/comm/config_agreement.hpp"
#include "lowcomm/config/compute_config.hpp"
#include "lowcomm/error.hpp"
#include "lowcomm/log/run_log.hpp"
#include "common/mpi_session.hpp"
#include "train_keys.hpp"

namespace lowcomm::cli {

const std::vector<ConfigSetting>& resumable_keys() {
  static const std::vector<ConfigSetting> keys{
      {"train.steps", std::int64_t{1}},      {"train.progress_every", std::int64_t{1}},
      {"train.eval_every", std::int64_t{0}}, {"train.checkpoint_every", std::int64_t{0}},
      {"schedule.lr", 1.0},                   {"train.grad_clip", 0.0},
      {"train.nonfinite", "stop"},           {"train.keep_checkpoints", std::int64_t{1}},
      {"compute.backend", "cpu"},            {"compute.threads", std::int64_t{0}},
      {"comm.transport", "mpi"},             {"experiment.method", ""}};
  return keys;
}

std::string resumable_key_list() {
  std::string list;
  const std::vector<ConfigSetting>& keys = resumable_keys();
  for (std::size_t i = 0; i < keys.size(); ++i) {
    list += (i == 0 ? "" : i + 1 == keys.size() ? " and " : ", ") + keys[i].path;
  }
  return list;
}

std::int64_t resumable_hash(const Config& config) {
  return static_cast<std::int64_t>(config.with(resumable_keys()).hash_of_changes());
}

namespace {

// The log's configuration with --set applied; ConfigError when a --set changes a key that is not
// resumable, or when the log's configuration cannot be read.
Config logged_configuration(const std::filesystem::path& log, const ConfigArguments& arguments) {
  const std::optional<std::string> text = read_latest_run_config(log);
  if (!text) {
    throw ConfigError(fmt::format("{} holds no configuration to resume with: pass the run's --config and --set "
                                  "options with --resume",
                                  log.string()));
  }
  const ConfigSchema schema = train_schema();
  std::optional<Config> logged;
  try {
    logged = Config::from_string(*text, schema, {}, log.string());
  } catch (const ConfigError& e) {
    throw ConfigError(fmt::format("the configuration in {} cannot be read by this lowcomm ({}): resume with the "
                                  "lowcomm that started the run, or pass the run's --config and --set options",
                                  log.string(), e.what()));
  }
  Config resumed = Config::from_string(*text, schema, arguments.overrides, log.string());
  const std::vector<std::string> changes =
      resumed.with(resumable_keys()).changes_since(logged->with(resumable_keys()));
  if (!changes.empty()) {
    std::string list;
    for (const std::string& change : changes) list += (list.empty() ? "" : ", ") + change;
    throw ConfigError(fmt::format("--resume continues the run with the configuration in {}; a --set beside it may "
                                  "change only {}, not what the steps so far computed with: {}. Drop that --set, "
                                  "or start a new --out to train with it",
                                  log.string(), resumable_key_list(), list));
  }
  return resumed;
}

}  // namespace

Config train_configuration(const ConfigArguments& arguments, bool resume, const std::filesystem::path& run_dir,
                           const ControlChannel& control) {
  const std::filesystem::path log = run_dir / "log.h5";
  if (!resume || !arguments.file.empty() || !std::filesystem::exists(log)) {
    return load_config_on_all_ranks(arguments, train_schema(), control);
  }
  std::optional<Config> config;
  agree_on_failure(control, [&] { config = logged_configuration(log, arguments); });
  agree_on_failure(control, [&] { require_identical_on_all_ranks(*config, control); });
  if (config->has("compute.threads")) use_compute_threads(*config);
  return std::move(*config);
}

}  // namespace lowcomm::cli
