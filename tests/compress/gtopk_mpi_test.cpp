// gTop-k over MPI: CompressedAllReduce runs compressor.topk.exchange = "tree" (with error
// feedback) on the fixture's inputs (tests/fixtures/gtopk.h5, make_gtopk_fixture.py) at the world
// size of this run, and every rank's aggregate and residual equal the simulation's bit for bit; each
// rank sends one payload per pair exchange it takes part in; with k large enough that nothing is
// dropped, the tree's aggregate equals the gather's; absent peers are refused.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <fmt/format.h>

#include "fixtures/fixtures.hpp"
#include "lowcomm/comm/communicator.hpp"
#include "lowcomm/comm/network_config.hpp"
#include "lowcomm/compress/compressed_all_reduce.hpp"
#include "lowcomm/compress/registry.hpp"
#include "lowcomm/error.hpp"

namespace lowcomm {
namespace {

const test::FixtureFile& fixture() {
  static const test::FixtureFile file(LOWCOMM_GTOPK_FIXTURE);
  return file;
}

struct StepResult {
  std::vector<float> aggregate, residual;
  SyncReport report;
};

// One step of `exchange` ("tree" or "gather") top-k with error feedback on the group's inputs.
StepResult run(Communicator& comm, const std::string& group, const std::string& exchange, Participation participation = {}) {
  const auto n = fixture().attr_int(group, "n"), k = fixture().attr_int(group, "k");
  ConfigSchema schema;
  CompressorRegistry::global().add_config_keys(schema);
  const Config config = Config::defaults(
      schema, std::vector<std::string>{"compressor.name=topk", fmt::format("compressor.topk.k={}", k),
                                       fmt::format("compressor.topk.exchange={}", exchange)});
  CompressedAllReduce sync(comm, CompressorRegistry::global().create(config), {TensorInfo{"v", {n}}},
                           Granularity::PerTensor, 1, 0, ExecutionContext{}, std::move(participation));
  const std::vector<float> all = fixture().floats(group + "/input");
  const std::vector<float> mine(all.begin() + comm.rank() * n, all.begin() + (comm.rank() + 1) * n);
  StepResult out;
  out.aggregate.assign(static_cast<std::size_t>(n), -1.0f);
  const std::vector<std::span<const float>> in{mine};
  const std::vector<std::span<float>> result{out.aggregate};
  out.report = sync.run(0, in, result);
  StateDict state;
  sync.compressor().save_state(state, "");
  out.residual = state.floats("residual/0");
  return out;
}

TEST(GtopkMpi, EqualsTheSimulationBitForBit) {
  Communicator comm(MPI_COMM_WORLD, CommunicatorOptions{});
  const std::string group = "/w" + std::to_string(comm.size());
  const StepResult got = run(comm, group, "tree");
  const std::vector<float> residual = fixture().floats(group + "/residual");
  const std::size_t n = got.aggregate.size(), r = static_cast<std::size_t>(comm.rank());
  EXPECT_EQ(got.aggregate, fixture().floats(group + "/aggregate"));
  EXPECT_EQ(got.residual, std::vector<float>(residual.begin() + static_cast<std::ptrdiff_t>(r * n),
                                             residual.begin() + static_cast<std::ptrdiff_t>((r + 1) * n)));
  // One payload of k int32 indices and k fp32 values per pair exchange this rank takes part in.
  const auto payload = static_cast<std::uint64_t>(fixture().attr_int(group, "k")) * 8;
  const auto exchanges = static_cast<std::uint64_t>(fixture().ints(group + "/exchanges")[r]);
  EXPECT_EQ(got.report.comm.bytes_sent, exchanges * payload);
  EXPECT_EQ(got.report.payload_bytes, payload);
}

// k = n: every merge keeps every entry, the inputs are small integers (exact sums), so the tree's
// aggregate is the gather's mean bit for bit.
TEST(GtopkMpi, WithNothingDroppedTheTreeEqualsTheGather) {
  Communicator comm(MPI_COMM_WORLD, CommunicatorOptions{});
  const std::string group = "/exact_w" + std::to_string(comm.size());
  const StepResult tree = run(comm, group, "tree"), gather = run(comm, group, "gather");
  EXPECT_EQ(tree.aggregate, gather.aggregate);
  EXPECT_EQ(tree.aggregate, fixture().floats(group + "/aggregate"));
}

TEST(GtopkMpi, RefusesAbsentPeersAndNonFp32Values) {
  Communicator comm(MPI_COMM_WORLD, CommunicatorOptions{});
  ConfigSchema schema;
  CompressorRegistry::global().add_config_keys(schema);
  add_network_keys(schema);
  const Config dropout = Config::defaults(schema, std::vector<std::string>{"cluster.dropout=0.2"});
  EXPECT_THAT([&] { (void)run(comm, "/w" + std::to_string(comm.size()), "tree",
                              participation_from_config(dropout, comm.size(), 1)); },
              testing::ThrowsMessage<ConfigError>(testing::HasSubstr("no rule for absent peers")));
  const Config bf16 = Config::defaults(
      schema, std::vector<std::string>{"compressor.name=topk", "compressor.topk.exchange=tree",
                                       "compressor.topk.value_type=bf16"});
  EXPECT_THAT([&] { (void)CompressorRegistry::global().create(bf16); },
              testing::ThrowsMessage<ConfigError>(testing::HasSubstr("needs value_type = \"fp32\"")));
}

}  // namespace
}  // namespace lowcomm
