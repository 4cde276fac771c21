// The configuration loader and its validators on TOML the fuzzer writes: parsing against the
// schema of every library section (network, strategy with its optimizer and compressor, schedule,
// data), then what a run checks before it starts: the compressor's selection and construction,
// the learning-rate schedule, the optimizer, and the network model for 4 ranks. Each accepts the
// configuration or throws lowcomm::Error (ConfigError). A configuration accepted must also survive
// its own round trip: written as TOML (Config::to_toml) and read back, it writes the same TOML.
#include <cstdlib>
#include <string>

#include "fuzz_input.hpp"
#include "lowcomm/comm/network_config.hpp"
#include "lowcomm/compress/registry.hpp"
#include "lowcomm/data/data_config.hpp"
#include "lowcomm/optim/lr_schedule.hpp"
#include "lowcomm/optim/registry.hpp"
#include "lowcomm/strategy/registry.hpp"

namespace lowcomm::fuzz {
namespace {

const ConfigSchema& schema() {
  static const ConfigSchema all = [] {
    ConfigSchema s;
    add_network_keys(s);
    add_strategy_keys(s);
    add_schedule_keys(s);
    add_data_keys(s);
    return s;
  }();
  return all;
}

void run(const std::string& text) {
  const Config config = Config::from_string(text, schema());
  const std::string written = config.to_toml();
  if (Config::from_string(written, schema()).to_toml() != written) std::abort();
  const CompressorSelection selection = compressor_selection(config);
  (void)selection;
  (void)CompressorRegistry::global().create(config);
  (void)LrSchedule::from_config(config);
  (void)make_optimizer(config);
  (void)communicator_options_from_config(config, 4);
}

}  // namespace
}  // namespace lowcomm::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  lowcomm::fuzz::FuzzInput in(data, size);
  const std::string text = in.take_rest_as_string();
  lowcomm::fuzz::only_lowcomm_errors([&] { lowcomm::fuzz::run(text); });
  return 0;
}
