// gTop-k over MPI: CompressedAllReduce runs compressor.topk.exchange = "tree" (with error
// feedback) on the inputs of every fixture case of this run's world size (tests/fixtures/gtopk.h5,
// make_gtopk_fixture.py: the butterfly, regional groups, absent ranks), and every rank's
// aggregate and residual equal the simulation's bit for bit; each rank's bytes are one payload per
// round it sends in; with k large enough that nothing is dropped, the tree's aggregate equals the
// gather's; groups with a compressor that does not merge are refused. The dense tree
// (compressor.none.exchange = "tree") is the same merges with every entry kept: its aggregate equals
// top-k's tree at k = n bit for bit on every case (groups and absent ranks included), and the
// all-reduce's where the sums are exact, in fp32 and in bf16.
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
#include "merge_tree_mpi_step.hpp"

namespace lowcomm {
namespace {

const test::FixtureFile& fixture() {
  static const test::FixtureFile file(LOWCOMM_GTOPK_FIXTURE);
  return file;
}

using StepResult = test::MergeStep;

// One step of the compressor that `settings` configure on the group's inputs.
StepResult run_configured(Communicator& comm, const std::string& group, const std::vector<std::string>& settings) {
  return test::run_merge_step(comm, fixture(), group, {fixture().attr_int(group, "n")}, settings);
}

// One step of `exchange` ("tree" or "gather") top-k with error feedback and the case's k.
StepResult run(Communicator& comm, const std::string& group, const std::string& exchange,
               std::int64_t k_override = 0) {
  const std::int64_t k = k_override > 0 ? k_override : fixture().attr_int(group, "k");
  return run_configured(comm, group, {"compressor.name=topk", fmt::format("compressor.topk.k={}", k),
                                      fmt::format("compressor.topk.exchange={}", exchange)});
}

// One step of the dense exchange: `exchange` "all_reduce" or "tree", values in `type`.
StepResult run_dense(Communicator& comm, const std::string& group, const std::string& exchange,
                     const std::string& type = "fp32") {
  return run_configured(comm, group, {"compressor.name=none", fmt::format("compressor.none.exchange={}", exchange),
                                      fmt::format("compressor.none.value_type={}", type)});
}

// The fixture's cases of this world size.
std::vector<std::string> cases_of(int world_size) {
  std::vector<std::string> cases;
  for (const std::string& group : fixture().top_level()) {
    if (fixture().attr_int(group, "world_size") == world_size) cases.push_back(group);
  }
  return cases;
}

TEST(GtopkMpi, EqualsTheSimulationBitForBit) {
  Communicator comm(MPI_COMM_WORLD, CommunicatorOptions{});
  const std::vector<std::string> cases = cases_of(comm.size());
  ASSERT_FALSE(cases.empty());
  for (const std::string& group : cases) {
    SCOPED_TRACE(group);
    const StepResult got = run(comm, group, "tree");
    const std::vector<float> residual = fixture().floats(group + "/residual");
    const std::size_t n = got.aggregate.size(), r = static_cast<std::size_t>(comm.rank());
    EXPECT_EQ(got.aggregate, fixture().floats(group + "/aggregate"));
    EXPECT_EQ(got.residual, std::vector<float>(residual.begin() + static_cast<std::ptrdiff_t>(r * n),
                                               residual.begin() + static_cast<std::ptrdiff_t>((r + 1) * n)));
    // One payload of k int32 indices and k fp32 values per round this rank sends in.
    const auto payload = static_cast<std::uint64_t>(fixture().attr_int(group, "k")) * 8;
    const auto sent = static_cast<std::uint64_t>(fixture().ints(group + "/sends")[r]);
    EXPECT_EQ(got.report.comm.bytes_sent, sent * payload);
    EXPECT_EQ(got.report.payload_bytes, fixture().ints(group + "/present")[r] != 0 ? payload : 0);
  }
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

// The dense tree merges whole vectors through the same rounds; top-k's tree at k = n keeps every
// entry, summed in the same pairs, so the two agree bit for bit, each rank sending the whole
// vector (n fp32 values) in every round it sends in.
TEST(GtopkMpi, TheDenseTreeIsTopkTreeKeepingEveryEntry) {
  Communicator comm(MPI_COMM_WORLD, CommunicatorOptions{});
  for (const std::string& group : cases_of(comm.size())) {
    SCOPED_TRACE(group);
    const auto n = fixture().attr_int(group, "n");
    const StepResult dense = run_dense(comm, group, "tree"), sparse = run(comm, group, "tree", n);
    EXPECT_EQ(dense.aggregate, sparse.aggregate);
    const auto r = static_cast<std::size_t>(comm.rank());
    EXPECT_EQ(dense.report.comm.bytes_sent, static_cast<std::uint64_t>(fixture().ints(group + "/sends")[r]) *
                                                static_cast<std::uint64_t>(n) * 4);
  }
}

// Small integers: every partial sum is exact in fp32 and bf16, so the order of the sums does not
// matter and the dense tree's mean is the all-reduce's, with nothing lost to rounding in bf16.
TEST(GtopkMpi, TheDenseTreeEqualsTheAllReduceWhereSumsAreExact) {
  Communicator comm(MPI_COMM_WORLD, CommunicatorOptions{});
  const std::string group = "/exact_w" + std::to_string(comm.size());
  const StepResult all_reduce = run_dense(comm, group, "all_reduce");
  EXPECT_EQ(run_dense(comm, group, "tree").aggregate, all_reduce.aggregate);
  EXPECT_EQ(run_dense(comm, group, "tree", "bf16").aggregate, all_reduce.aggregate);
  EXPECT_EQ(run_dense(comm, group, "all_reduce", "bf16").aggregate, all_reduce.aggregate);
}

TEST(GtopkMpi, RefusesGroupsWithoutAMergeAndNonFp32Values) {
  Communicator comm(MPI_COMM_WORLD, CommunicatorOptions{});
  ConfigSchema schema;
  CompressorRegistry::global().add_config_keys(schema);
  const Config gather = Config::defaults(schema, std::vector<std::string>{"compressor.name=topk"});
  EXPECT_THAT([&] {
    CompressedAllReduce sync(comm, CompressorRegistry::global().create(gather), {TensorInfo{"v", {8}}},
                             Granularity::PerTensor, 1, 0, ExecutionContext{}, {},
                             std::vector<int>(static_cast<std::size_t>(comm.size()), 0));
  }, testing::ThrowsMessage<ConfigError>(testing::HasSubstr("compressor.merge_groups groups the ranks of a merged")));
  const Config bf16 = Config::defaults(
      schema, std::vector<std::string>{"compressor.name=topk", "compressor.topk.exchange=tree",
                                       "compressor.topk.value_type=bf16"});
  EXPECT_THAT([&] { (void)CompressorRegistry::global().create(bf16); },
              testing::ThrowsMessage<ConfigError>(testing::HasSubstr("needs value_type = \"fp32\"")));
}

}  // namespace
}  // namespace lowcomm
