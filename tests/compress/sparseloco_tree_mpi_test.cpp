// SparseLoCo's selection over gTop-k's tree on MPI: CompressedAllReduce runs
// compressor.sparseloco.exchange = "tree" with error feedback on the inputs of every case of
// tests/fixtures/sparseloco_tree.h5 (make_sparseloco_tree_fixture.py) of this run's world size,
// with its groups and absent ranks: every rank's aggregate and residual equal the simulation's bit
// for bit and its bytes are one payload per round it sends in; with k the whole block (nothing
// dropped) the tree's aggregate is the gather's per-entry mean.
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
  static const test::FixtureFile file(LOWCOMM_SPARSELOCO_TREE_FIXTURE);
  return file;
}

// One step of SparseLoCo's wire (fp32 values, no norm clip), gathered or merged, with error
// feedback, on the case's inputs, groups and absent ranks.
test::MergeStep run(Communicator& comm, const std::string& group, const std::string& exchange) {
  return test::run_merge_step(
      comm, fixture(), group, {fixture().attr_int(group, "rows"), fixture().attr_int(group, "cols")},
      {"compressor.name=sparseloco", fmt::format("compressor.sparseloco.topk={}", fixture().attr_int(group, "topk")),
       fmt::format("compressor.sparseloco.chunk={}", fixture().attr_int(group, "chunk")), "compressor.sparseloco.bins=0",
       "compressor.sparseloco.norm_clip=false", fmt::format("compressor.sparseloco.exchange={}", exchange)});
}

TEST(SparseLocoTreeMpi, EqualsTheSimulationBitForBit) {
  Communicator comm(MPI_COMM_WORLD, CommunicatorOptions{});
  const auto r = static_cast<std::size_t>(comm.rank());
  int cases = 0;
  for (const std::string& group : fixture().top_level()) {
    if (fixture().attr_int(group, "world_size") != comm.size()) continue;
    SCOPED_TRACE(group);
    ++cases;
    const test::MergeStep tree = run(comm, group, "tree");
    EXPECT_EQ(tree.aggregate, fixture().floats(group + "/aggregate"));
    const std::vector<float> residual = fixture().floats(group + "/residual");
    const std::size_t n = tree.aggregate.size();
    EXPECT_EQ(tree.residual, std::vector<float>(residual.begin() + static_cast<std::ptrdiff_t>(r * n),
                                                residual.begin() + static_cast<std::ptrdiff_t>((r + 1) * n)));
    // One payload per round this rank sends in: 12-bit indices, fp32 sums, uint16 counts.
    const auto entries = static_cast<std::uint64_t>(fixture().ints(group + "/global_indices").size());
    const auto sends = static_cast<std::uint64_t>(fixture().ints(group + "/sends")[r]);
    EXPECT_EQ(tree.report.comm.bytes_sent, sends * (3 * ((entries + 1) / 2) + entries * (4 + 2)));
    if (group.starts_with("/exact")) {
      const test::MergeStep gather = run(comm, group, "gather");
      for (std::size_t i = 0; i < n; ++i) {
        EXPECT_NEAR(tree.aggregate[i], gather.aggregate[i], 1e-6 * (1.0 + std::abs(gather.aggregate[i]))) << i;
      }
    }
  }
  EXPECT_GT(cases, 0);
}

}  // namespace
}  // namespace lowcomm
