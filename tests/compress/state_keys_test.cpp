// Per-unit state read back from a checkpoint names its unit by the key's last segment
// ("q/3"): a key that names no unit, from a damaged or foreign file, is refused with
// lowcomm::Error naming it, by every compressor that keeps such state (PowerSGD's warm start,
// error feedback's residuals, majority_vote's momenta), never read as another unit.
#include <gtest/gtest.h>

#include <string>

#include "lowcomm/compress/registry.hpp"
#include "lowcomm/compress/unit.hpp"
#include "lowcomm/error.hpp"

namespace lowcomm {
namespace {

TEST(StateKeys, NameTheirUnitInDecimalAndNothingElse) {
  EXPECT_EQ(unit_id_of_state_key("c/q/0", "c/q/"), 0u);
  EXPECT_EQ(unit_id_of_state_key("c/q/4294967295", "c/q/"), 4294967295u);
  for (const char* key : {"c/q/", "c/q/x", "c/q/12x", "c/q/-1", "c/q/+1", "c/q/ 1", "c/q/4294967296", "d/q/1"}) {
    try {
      (void)unit_id_of_state_key(key, "c/q/");
      ADD_FAILURE() << key << " accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
    }
  }
}

TEST(StateKeys, EveryCompressorWithUnitStateRefusesAKeyNamingNoUnit) {
  ConfigSchema schema;
  CompressorRegistry::global().add_config_keys(schema);
  const std::vector<std::pair<std::string, std::string>> cases{
      {"powersgd", "c/inner/q/x"},  // inside error feedback, its default
      {"majority_vote", "c/momentum/7b"},
      {"topk", "c/residual/1.5"},  // topk runs inside error feedback by default
  };
  for (const auto& [name, key] : cases) {
    const auto compressor = CompressorRegistry::global().create(
        Config::defaults(schema, std::vector<std::string>{"compressor.name=" + name}));
    StateDict state;
    state.put(key, std::vector<float>{1.0f});
    EXPECT_THROW(compressor->load_state(state, "c/"), Error) << name << " with " << key;
  }
}

}  // namespace
}  // namespace lowcomm
