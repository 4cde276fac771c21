// The experiment files of `lowcomm sweep` (experiments/*.toml): the whole input is the file. It
// is loaded against the training command's schema (every library section, the model's keys and
// the loop's), which builds the grid and validates every point; then the first points' runs are
// resolved as `lowcomm train` resolves them (the model from its preset and overrides, the loop's
// options). Each step accepts the file or throws lowcomm::Error (ConfigError); an accepted grid
// must also refuse the point one past its end.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "fuzz_input.hpp"
#include "sweep/experiment.hpp"
#include "train/train_keys.hpp"

namespace lowcomm::fuzz {
namespace {

void run(const std::string& text) {
  static const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("lowcomm-fuzz-" + std::to_string(::getpid()) + ".toml");
  static const ConfigSchema schema = cli::train_schema();
  {
    std::ofstream out(path, std::ios::trunc);
    out << text;
  }
  const cli::Experiment experiment = cli::Experiment::load(path, schema);
  for (std::int64_t i = 0; i < std::min<std::int64_t>(experiment.size(), 4); ++i) {
    const Config config = experiment.config(experiment.point(i));
    (void)cli::model_config(config);
    (void)cli::loop_options(config);
  }
  try {
    (void)experiment.point(experiment.size());
  } catch (const ConfigError&) {
    return;
  }
  std::abort();  // a point past the grid's end was handed out
}

}  // namespace
}  // namespace lowcomm::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  lowcomm::fuzz::FuzzInput in(data, size);
  const std::string text = in.take_rest_as_string();
  lowcomm::fuzz::only_lowcomm_errors([&] { lowcomm::fuzz::run(text); });
  return 0;
}
