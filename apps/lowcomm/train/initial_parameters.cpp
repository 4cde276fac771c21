#include "initial_parameters.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "common/mpi_session.hpp"
#include "lowcomm/error.hpp"
#include "lowcomm/log/run_log.hpp"
#include "checkpoint_store.hpp"
#include "train_keys.hpp"

namespace lowcomm::cli {

namespace {

// "model.width = 128 there, 64 here, ..." for each size that differs, or "".
std::string model_differences(const gpt::GptConfig& theirs, const gpt::GptConfig& ours) {
  const struct {
    const char* key;
    std::int64_t there, here;
  } sizes[] = {{"layers", theirs.layers, ours.layers},
               {"heads", theirs.heads, ours.heads},
               {"width", theirs.width, ours.width},
               {"context_length", theirs.context_length, ours.context_length},
               {"vocab_size", theirs.vocab_size, ours.vocab_size}};
  std::string list;
  for (const auto& size : sizes) {
    if (size.there == size.here) continue;
    list += fmt::format("{}model.{} = {} there, {} here", list.empty() ? "" : ", ", size.key, size.there, size.here);
  }
  return list;
}

// Rank 0: the folder exists and its log says it trained this model.
void check_same_model(const std::filesystem::path& run_dir, const std::string& origin, const Config& config) {
  if (!std::filesystem::is_directory(run_dir)) {
    throw ConfigError(fmt::format("{}: no such folder; name the --out folder of the run to start from", origin));
  }
  const std::filesystem::path log = run_dir / "log.h5";
  std::optional<std::string> text;
  try {
    if (std::filesystem::exists(log)) text = read_run_config(log);
  } catch (const Error& e) {
    throw ConfigError(fmt::format("{}: {} cannot be read ({}), so the model that run trained is unknown", origin,
                                  log.string(), e.what()));
  }
  if (!text) {
    throw ConfigError(fmt::format("{}: {} is missing or holds no configuration, so the model that run trained is "
                                  "unknown; name the --out folder of a `lowcomm train` run",
                                  origin, log.string()));
  }
  // A log of another lowcomm version may hold keys this one refuses: the message names where they are.
  const Config trained =
      Config::from_string(*text, train_schema(), {}, fmt::format("{}: {} (its config attribute)", origin, log.string()));
  const std::string differences = model_differences(model_config(trained), model_config(config));
  if (!differences.empty()) {
    throw ConfigError(fmt::format("{} trained another model ({}): set the same model.* keys as that run", origin,
                                  differences));
  }
}

}  // namespace

void load_initial_parameters(const std::filesystem::path& run_dir, const Config& config,
                             const ControlChannel& control, std::span<float> parameters) {
  const std::string origin = fmt::format("train.init_from = \"{}\"", run_dir.string());
  on_rank_zero_agreed(control, [&] { check_same_model(run_dir, origin, config); });
  const CheckpointStore store(run_dir, control);
  const std::optional<std::int64_t> step = store.latest();
  agree_on_failure(control, [&] {
    if (!step) {
      throw ConfigError(fmt::format("{}: {} holds no complete checkpoint (its `latest` file is missing); let that "
                                    "run finish, or stop it with SIGUSR1 so that it saves one",
                                    origin, store.folder().string()));
    }
    const StateDict state = store.load(*step, 0);
    const std::string where = fmt::format("{}: the checkpoint of step {} (rank 0's file)", origin, *step);
    if (!state.contains("model/parameters")) {
      throw ConfigError(fmt::format("{} holds no tensor model/parameters; is it a `lowcomm train` checkpoint?", where));
    }
    const std::vector<float>& values = state.floats("model/parameters");
    if (values.size() != parameters.size()) {
      throw ConfigError(fmt::format("{} holds {} parameters, this model has {}", where, values.size(),
                                    parameters.size()));
    }
    std::ranges::copy(values, parameters.begin());
  });
}

}  // namespace lowcomm::cli
