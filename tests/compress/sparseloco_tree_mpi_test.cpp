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
#include "merge_tree_case.hpp"

namespace lowcomm {
namespace {

const test::FixtureFile& fixture() {
  static const test::FixtureFile file(LOWCOMM_SPARSELOCO_TREE_FIXTURE);
  return file;
}

struct StepResult {
  std::vector<float> aggregate, residual;
  SyncReport report;
};

// One step of SparseLoCo's wire (fp32 values, no norm clip), gathered or merged, with error
// feedback, on the case's inputs, groups and absent ranks.
StepResult run(Communicator& comm, const std::string& group, const std::string& exchange) {
  const auto rows = fixture().attr_int(group, "rows"), cols = fixture().attr_int(group, "cols");
  ConfigSchema schema;
  CompressorRegistry::global().add_config_keys(schema);
  const Config config = Config::defaults(
      schema, std::vector<std::string>{"compressor.name=sparseloco",
                                       fmt::format("compressor.sparseloco.topk={}", fixture().attr_int(group, "topk")),
                                       fmt::format("compressor.sparseloco.chunk={}", fixture().attr_int(group, "chunk")),
                                       "compressor.sparseloco.bins=0", "compressor.sparseloco.norm_clip=false",
                                       fmt::format("compressor.sparseloco.exchange={}", exchange)});
  const test::MergeTreeCase tree(fixture(), group);
  CompressedAllReduce sync(comm, CompressorRegistry::global().create(config), {TensorInfo{"w", {rows, cols}}},
                           Granularity::PerTensor, 1, 0, ExecutionContext{}, tree.participation(),
                           exchange == "tree" ? tree.groups : std::vector<int>{});
  const auto n = static_cast<std::size_t>(rows * cols);
  const auto r = static_cast<std::size_t>(comm.rank());
  const std::vector<float> all = fixture().floats(group + "/input");
  const std::vector<float> mine(all.begin() + static_cast<std::ptrdiff_t>(n * r),
                                all.begin() + static_cast<std::ptrdiff_t>(n * (r + 1)));
  StepResult out;
  out.aggregate.assign(n, -1.0f);
  const std::vector<std::span<const float>> in{mine};
  const std::vector<std::span<float>> result{out.aggregate};
  out.report = sync.run(0, in, result);
  StateDict state;
  sync.compressor().save_state(state, "");
  out.residual = state.floats("residual/0");
  return out;
}

TEST(SparseLocoTreeMpi, EqualsTheSimulationBitForBit) {
  Communicator comm(MPI_COMM_WORLD, CommunicatorOptions{});
  const auto r = static_cast<std::size_t>(comm.rank());
  int cases = 0;
  for (const std::string& group : fixture().top_level()) {
    if (fixture().attr_int(group, "world_size") != comm.size()) continue;
    SCOPED_TRACE(group);
    ++cases;
    const StepResult tree = run(comm, group, "tree");
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
      const StepResult gather = run(comm, group, "gather");
      for (std::size_t i = 0; i < n; ++i) {
        EXPECT_NEAR(tree.aggregate[i], gather.aggregate[i], 1e-6 * (1.0 + std::abs(gather.aggregate[i]))) << i;
      }
    }
  }
  EXPECT_GT(cases, 0);
}

}  // namespace
}  // namespace lowcomm
