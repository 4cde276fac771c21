// DeMo over gTop-k's tree on MPI: CompressedAllReduce runs compressor.dct_topk.exchange = "tree"
// on the inputs of every case of tests/fixtures/demo_tree.h5 (make_demo_tree_fixture.py) of this
// run's world size, with its groups and absent ranks: every rank's aggregate equals the
// simulation's to float32 rounding and its bytes are one payload per round it sends in; with k the
// whole block (nothing dropped) the tree's aggregate is the gather's scatter-mean.
#include <gtest/gtest.h>
#include <mpi.h>

#include <fmt/format.h>

#include <cmath>

#include "fixtures/fixtures.hpp"
#include "lowcomm/comm/communicator.hpp"
#include "lowcomm/compress/compressed_all_reduce.hpp"
#include "lowcomm/compress/registry.hpp"
#include "merge_tree_mpi_step.hpp"

namespace lowcomm {
namespace {

const test::FixtureFile& fixture() {
  static const test::FixtureFile file(LOWCOMM_DEMO_TREE_FIXTURE);
  return file;
}

// One step of DeMo's transport, gathered or merged, on the case's inputs, groups and absent ranks.
test::MergeStep run(Communicator& comm, const std::string& group, const std::string& exchange) {
  return test::run_merge_step(
      comm, fixture(), group, {fixture().attr_int(group, "rows"), fixture().attr_int(group, "cols")},
      {"compressor.name=dct_topk", fmt::format("compressor.dct_topk.topk={}", fixture().attr_int(group, "k")),
       fmt::format("compressor.dct_topk.chunk={}", fixture().attr_int(group, "chunk")),
       fmt::format("compressor.dct_topk.exchange={}", exchange)});
}

void expect_close(const std::vector<float>& got, const std::vector<float>& want, double tolerance) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], tolerance * (1.0 + std::abs(want[i]))) << "at " << i;
  }
}

TEST(DemoTreeMpi, EqualsTheSimulation) {
  Communicator comm(MPI_COMM_WORLD, CommunicatorOptions{});
  int cases = 0;
  for (const std::string& group : fixture().top_level()) {
    if (fixture().attr_int(group, "world_size") != comm.size()) continue;
    SCOPED_TRACE(group);
    ++cases;
    const test::MergeStep tree = run(comm, group, "tree");
    expect_close(tree.aggregate, fixture().floats(group + "/aggregate"), 2e-5);
    // One payload per round this rank sends in: int64 indices, fp32 sums, uint16 counts per entry.
    const auto entries = static_cast<std::uint64_t>(fixture().ints(group + "/global_indices").size());
    const auto sends = static_cast<std::uint64_t>(fixture().ints(group + "/sends")[static_cast<std::size_t>(comm.rank())]);
    EXPECT_EQ(tree.report.comm.bytes_sent, sends * entries * (8 + 4 + 2));
    if (group.starts_with("/exact")) expect_close(tree.aggregate, run(comm, group, "gather").aggregate, 1e-6);
  }
  EXPECT_GT(cases, 0);
}

}  // namespace
}  // namespace lowcomm
