// require_identical_on_all_ranks: passes when every rank resolved the same configuration, and
// throws on every rank (not only on those that differ) when one does not.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <string>
#include <vector>

#include "lowcomm/comm/config_agreement.hpp"
#include "lowcomm/error.hpp"

namespace lowcomm {
namespace {

using testing::HasSubstr;

ConfigSchema schema() {
  ConfigSchema schema;
  schema.integer("bench.iterations", 10, "timed iterations", 1)
      .string("network.scenario", "datacenter", "bandwidth scenario");
  return schema;
}

int rank_of(MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  return rank;
}

int size_of(MPI_Comm comm) {
  int size = 0;
  MPI_Comm_size(comm, &size);
  return size;
}

// The message thrown on this rank, or "" when nothing was thrown.
std::string check_error(const Config& config) {
  const ControlChannel control(MPI_COMM_WORLD);
  try {
    require_identical_on_all_ranks(config, control);
  } catch (const ConfigError& error) {
    return error.what();
  }
  return {};
}

TEST(ConfigAcrossRanks, IdenticalConfigsPass) {
  const std::vector<std::string> overrides = {"bench.iterations=20", "network.scenario=consumer"};
  const Config config = Config::defaults(schema(), overrides);
  const ControlChannel control(MPI_COMM_WORLD);
  EXPECT_NO_THROW(require_identical_on_all_ranks(config, control));
}

TEST(ConfigAcrossRanks, LastRankDifferingThrowsOnEveryRank) {
  const int size = size_of(MPI_COMM_WORLD);
  if (size == 1) GTEST_SKIP() << "needs two ranks to differ";
  std::vector<std::string> overrides;
  if (rank_of(MPI_COMM_WORLD) == size - 1) overrides.push_back("bench.iterations=99");
  const std::string message = check_error(Config::defaults(schema(), overrides));
  ASSERT_FALSE(message.empty()) << "no ConfigError on this rank";
  EXPECT_THAT(message, HasSubstr("rank " + std::to_string(size - 1) + " of " +
                                 std::to_string(size) + " differs from rank 0"));
  EXPECT_THAT(message, HasSubstr("same config file and the same --set options"));
}

TEST(ConfigAcrossRanks, EveryDifferingRankIsNamed) {
  const int size = size_of(MPI_COMM_WORLD);
  if (size < 3) GTEST_SKIP() << "needs three ranks for two to differ";
  std::vector<std::string> overrides;
  if (rank_of(MPI_COMM_WORLD) != 0) overrides.push_back("network.scenario=consumer");
  const std::string message = check_error(Config::defaults(schema(), overrides));
  std::string listed = "ranks 1";
  for (int rank = 2; rank < size; ++rank) listed += ", " + std::to_string(rank);
  EXPECT_THAT(message, HasSubstr(listed + " of " + std::to_string(size) + " differ from rank 0"));
}

}  // namespace
}  // namespace lowcomm
