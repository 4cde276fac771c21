#pragma once
// A merge-tree fixture case (merge_tree_case.hpp) as one step of CompressedAllReduce on MPI: the
// compressor that `settings` configure, this rank's slice of the case's input, the case's absent
// ranks and, for a merged exchange, its groups. For gtopk_mpi_test, demo_tree_mpi_test and
// sparseloco_tree_mpi_test.
#include <memory>
#include <string>
#include <vector>

#include "lowcomm/comm/communicator.hpp"
#include "lowcomm/compress/compressed_all_reduce.hpp"
#include "lowcomm/compress/registry.hpp"
#include "merge_tree_case.hpp"

namespace lowcomm::test {

struct MergeStep {
  std::vector<float> aggregate;
  std::vector<float> residual;  // error feedback's, when the compressor keeps one
  SyncReport report;
};

inline MergeStep run_merge_step(Communicator& comm, const FixtureFile& file, const std::string& group,
                                std::vector<std::int64_t> shape, const std::vector<std::string>& settings) {
  ConfigSchema schema;
  CompressorRegistry::global().add_config_keys(schema);
  std::unique_ptr<Compressor> compressor = CompressorRegistry::global().create(Config::defaults(schema, settings));
  const MergeTreeCase tree(file, group);
  const bool merged = compressor->aggregation() == Aggregation::Merged;
  std::size_t n = 1;
  for (const std::int64_t d : shape) n *= static_cast<std::size_t>(d);
  CompressedAllReduce sync(comm, std::move(compressor), {TensorInfo{"w", std::move(shape)}}, Granularity::PerTensor, 1,
                           0, ExecutionContext{}, tree.participation(), merged ? tree.groups : std::vector<int>{});
  const std::vector<float> all = file.floats(group + "/input");
  const auto r = static_cast<std::size_t>(comm.rank());
  const std::vector<float> mine(all.begin() + static_cast<std::ptrdiff_t>(r * n),
                                all.begin() + static_cast<std::ptrdiff_t>((r + 1) * n));
  MergeStep out;
  out.aggregate.assign(n, -1.0f);
  const std::vector<std::span<const float>> in{mine};
  const std::vector<std::span<float>> result{out.aggregate};
  out.report = sync.run(0, in, result);
  StateDict state;
  sync.compressor().save_state(state, "");
  if (state.contains("residual/0")) out.residual = state.floats("residual/0");
  return out;
}

}  // namespace lowcomm::test
