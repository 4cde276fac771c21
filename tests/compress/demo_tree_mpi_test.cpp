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
#include "merge_tree_case.hpp"

namespace lowcomm {
namespace {

const test::FixtureFile& fixture() {
  static const test::FixtureFile file(LOWCOMM_DEMO_TREE_FIXTURE);
  return file;
}

struct StepResult {
  std::vector<float> aggregate;
  SyncReport report;
};

// One step of DeMo's transport, gathered or merged, on the case's inputs, groups and absent ranks.
StepResult run(Communicator& comm, const std::string& group, const std::string& exchange) {
  const auto rows = fixture().attr_int(group, "rows"), cols = fixture().attr_int(group, "cols");
  ConfigSchema schema;
  CompressorRegistry::global().add_config_keys(schema);
  const Config config = Config::defaults(
      schema, std::vector<std::string>{"compressor.name=dct_topk",
                                       fmt::format("compressor.dct_topk.topk={}", fixture().attr_int(group, "k")),
                                       fmt::format("compressor.dct_topk.chunk={}", fixture().attr_int(group, "chunk")),
                                       fmt::format("compressor.dct_topk.exchange={}", exchange)});
  const test::MergeTreeCase tree(fixture(), group);
  CompressedAllReduce sync(comm, CompressorRegistry::global().create(config), {TensorInfo{"w", {rows, cols}}},
                           Granularity::PerTensor, 1, 0, ExecutionContext{}, tree.participation(),
                           exchange == "tree" ? tree.groups : std::vector<int>{});
  const auto n = static_cast<std::size_t>(rows * cols);
  const std::vector<float> all = fixture().floats(group + "/input");
  const std::vector<float> mine(all.begin() + static_cast<std::ptrdiff_t>(n * static_cast<std::size_t>(comm.rank())),
                                all.begin() + static_cast<std::ptrdiff_t>(n * static_cast<std::size_t>(comm.rank() + 1)));
  StepResult out;
  out.aggregate.assign(n, -1.0f);
  const std::vector<std::span<const float>> in{mine};
  const std::vector<std::span<float>> result{out.aggregate};
  out.report = sync.run(0, in, result);
  return out;
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
    const StepResult tree = run(comm, group, "tree");
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
