// Which device each rank of a node takes (local_rank.hpp): the launchers' variables, their
// precedence, malformed values, and the modulo over visible devices.
#include "lowcomm/core/local_rank.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "lowcomm/error.hpp"

namespace lowcomm {
namespace {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

EnvironmentLookup lookup(const std::map<std::string, std::string>& variables) {
  return [variables](const char* name) -> const char* {
    const auto it = variables.find(name);
    return it == variables.end() ? nullptr : it->second.c_str();
  };
}

TEST(LocalRank, NoneWithoutALauncher) {
  EXPECT_FALSE(local_rank_from_environment(lookup({})).has_value());
  EXPECT_EQ(device_for_local_rank(std::nullopt, 4), 0);
}

TEST(LocalRank, EachLauncher) {
  for (const char* name : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "MV2_COMM_WORLD_LOCAL_RANK",
                           "PMIX_LOCAL_RANK", "SLURM_LOCALID"}) {
    const auto rank = local_rank_from_environment(lookup({{name, "3"}}));
    ASSERT_TRUE(rank.has_value()) << name;
    EXPECT_EQ(rank->rank, 3) << name;
    EXPECT_EQ(rank->source, name);
  }
}

TEST(LocalRank, MpiLauncherBeforeSlurm) {
  // mpirun inside an allocation: the batch step's SLURM_LOCALID is 0 for every rank.
  const auto rank = local_rank_from_environment(lookup({{"SLURM_LOCALID", "0"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "1"}}));
  ASSERT_TRUE(rank.has_value());
  EXPECT_EQ(rank->rank, 1);
  EXPECT_EQ(rank->source, "OMPI_COMM_WORLD_LOCAL_RANK");
}

TEST(LocalRank, MalformedValuesNameTheVariable) {
  for (const char* value : {"", "-1", "two", "1x", " 1", "99999999999"}) {
    EXPECT_THAT([&] { local_rank_from_environment(lookup({{"SLURM_LOCALID", value}})); },
                ThrowsMessage<Error>(HasSubstr("SLURM_LOCALID")))
        << "value \"" << value << "\"";
  }
}

TEST(LocalRank, DeviceIsLocalRankModuloVisibleDevices) {
  const auto rank = [](int r) { return std::optional<LocalRank>(LocalRank{r, "test"}); };
  EXPECT_EQ(device_for_local_rank(rank(0), 4), 0);
  EXPECT_EQ(device_for_local_rank(rank(3), 4), 3);
  EXPECT_EQ(device_for_local_rank(rank(5), 4), 1);
  EXPECT_EQ(device_for_local_rank(rank(7), 1), 0);  // --gpus-per-task=1: each task sees its own device 0
  EXPECT_THAT([&] { device_for_local_rank(rank(0), 0); }, ThrowsMessage<Error>(HasSubstr("no device")));
}

}  // namespace
}  // namespace lowcomm
