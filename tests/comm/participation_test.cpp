// Who takes part in a step (comm/participation.hpp): the same draws on every call, the configured
// fraction absent, outages where scheduled, never nobody; and cluster.* mistakes refused by key.
#include <gtest/gtest.h>

#include "lowcomm/comm/network_config.hpp"
#include "lowcomm/comm/participation.hpp"
#include "lowcomm/error.hpp"

namespace lowcomm {
namespace {

Config cluster_config(std::vector<std::string> overrides) {
  ConfigSchema schema;
  add_network_keys(schema);
  return Config::defaults(schema, overrides);
}

TEST(Participation, EveryoneByDefault) {
  EXPECT_TRUE(Participation().always_everyone());
  EXPECT_TRUE(participation_from_config(cluster_config({}), 4, 0).always_everyone());
  EXPECT_TRUE(participation_from_config(cluster_config({}), 4, 0).present(3).empty());
}

TEST(Participation, DrawsTheConfiguredFractionDeterministically) {
  const Participation who(5, 0.2, {}, 42);
  int absent = 0, total = 0;
  for (std::uint64_t step = 0; step < 4000; ++step) {
    const std::vector<bool> present = who.present(step);
    ASSERT_EQ(present, who.present(step));  // the same answer every time, on every rank
    ASSERT_TRUE(present.empty() || present.size() == 5u);  // empty: all present
    for (bool p : present) absent += p ? 0 : 1;
    total += 5;
  }
  EXPECT_NEAR(static_cast<double>(absent) / total, 0.2, 0.015);  // 20000 draws: 5 standard deviations
  EXPECT_NE(Participation(5, 0.2, {}, 43).present(7), Participation(5, 0.2, {}, 42).present(7))
      << "another seed, other draws (this pair happens to differ)";
}

TEST(Participation, OutagesAndNeverNobody) {
  const Participation who = participation_from_config(
      cluster_config({"cluster.rank.1.absent_steps=2-3,7", "cluster.rank.0.absent_steps=\"7\""}), 2, 0);
  EXPECT_TRUE(who.present(1).empty());  // everyone
  EXPECT_EQ(who.present(2), (std::vector<bool>{true, false}));
  EXPECT_EQ(who.present(3), (std::vector<bool>{true, false}));
  EXPECT_TRUE(who.present(4).empty());
  // Step 7 leaves nobody: rank 7 mod 2 takes part alone.
  EXPECT_EQ(who.present(7), (std::vector<bool>{false, true}));
}

TEST(Participation, MistakesNameTheKey) {
  const auto refused = [](std::vector<std::string> settings, int world, const char* needle) {
    try {
      participation_from_config(cluster_config(settings), world, 0);
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
      return;
    }
    ADD_FAILURE() << "accepted " << testing::PrintToString(settings);
  };
  refused({"cluster.rank.1.absent_steps=3-x"}, 2, "\"3-x\" is not a step range");
  refused({"cluster.rank.1.absent_steps=5-2"}, 2, "ends before it starts");
  refused({"cluster.rank.1.absent_steps=,"}, 2, "is not a step range");
  refused({"cluster.rank.2.absent_steps=1-2"}, 2, "not a rank of this 2-rank job");
  refused({"cluster.dropout=1"}, 2, "must be in [0, 1)");
}

}  // namespace
}  // namespace lowcomm
