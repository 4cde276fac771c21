// Peers that drop out (comm/participation.hpp), for every compressor at every granularity, with
// and without error feedback: when the last rank is absent from every step, the present ranks'
// aggregates are those of the same exchange run by the present ranks alone, and the absent rank
// receives the same aggregate as they do. Runs at 2, 3 and 4 ranks.
#include <gtest/gtest.h>
#include <mpi.h>

#include <random>

#include "lowcomm/compress/compressed_all_reduce.hpp"
#include "lowcomm/compress/registry.hpp"
#include "lowcomm/error.hpp"
#include "forwarding_compressor.hpp"

namespace lowcomm {
namespace {

const std::vector<TensorInfo> kTensors = {{"embedding", {50, 12}}, {"prime", {7, 13}}, {"bias", {31}}};

std::vector<std::vector<float>> gradients(int rank, std::uint64_t step) {
  std::mt19937 random(static_cast<unsigned>(1000 * rank + 10 * step + 1));
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<std::vector<float>> g;
  for (const TensorInfo& t : kTensors) {
    g.emplace_back(static_cast<std::size_t>(t.numel()));
    for (float& x : g.back()) x = normal(random);
  }
  return g;
}

// Three steps of one exchange on `comm`; returns every step's aggregates, flattened. With
// `undeclared`, the compressor's sizes travel as for a data-dependent plug-in.
std::vector<float> run(MPI_Comm comm, int rank, const Config& config, Participation who, bool undeclared = false) {
  Communicator communicator(comm, CommunicatorOptions{});
  std::unique_ptr<Compressor> compressor = CompressorRegistry::global().create(config);
  if (undeclared) compressor = std::make_unique<UndeclaredSizes>(std::move(compressor));
  CompressedAllReduce sync(communicator, std::move(compressor), kTensors,
                           parse_granularity(config.get_string("compressor.granularity")), 2048, 9, {},
                           std::move(who));
  std::vector<float> all;
  for (std::uint64_t step = 0; step < 3; ++step) {
    std::vector<std::vector<float>> g = gradients(rank, step), out = gradients(rank, step + 100);
    std::vector<std::span<const float>> in;
    std::vector<std::span<float>> aggregates;
    for (std::size_t t = 0; t < g.size(); ++t) {
      in.emplace_back(g[t]);
      aggregates.emplace_back(out[t]);
    }
    sync.run(step, in, aggregates);
    for (const std::vector<float>& a : out) all.insert(all.end(), a.begin(), a.end());
  }
  return all;
}

TEST(Dropout, AnAbsentRankIsAsIfItWereNotThereAndStillReceivesTheAggregate) {
  int rank = 0, world = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  if (world < 2) GTEST_SKIP() << "dropout needs two ranks";
  const int absent = world - 1;
  MPI_Comm present_ranks;
  MPI_Comm_split(MPI_COMM_WORLD, rank == absent ? 1 : 0, rank, &present_ranks);

  ConfigSchema schema;
  CompressorRegistry::global().add_config_keys(schema);
  int compared = 0;
  for (const CompressorInfo* info : CompressorRegistry::global().all()) {
    for (const char* granularity : {"tensor", "bucket", "global"}) {
      for (const bool ef : {false, true}) {
        const Config config = Config::defaults(
            schema, std::vector<std::string>{"compressor.name=" + info->name,
                                             std::string("compressor.granularity=") + granularity,
                                             "compressor." + info->name + ".error_feedback=" + (ef ? "true" : "false")});
        try {
          CompressorRegistry::global().create(config);
        } catch (const ConfigError&) {
          continue;  // a granularity this compressor refuses
        }
        SCOPED_TRACE(info->name + " " + granularity + (ef ? " with error feedback" : ""));
        const bool undeclared = info->name == "topk" && !ef;  // the size-table path too
        const std::vector<float> with_dropout =
            run(MPI_COMM_WORLD, rank, config, Participation(world, 0.0, {{absent, 0, 99}}, 9), undeclared);
        // Rank 0's aggregate, on every rank: the absent rank receives it too.
        std::vector<float> first = with_dropout;
        MPI_Bcast(first.data(), static_cast<int>(first.size()), MPI_FLOAT, 0, MPI_COMM_WORLD);
        EXPECT_EQ(with_dropout, first);
        if (rank != absent) {
          const std::vector<float> alone = run(present_ranks, rank, config, Participation(), undeclared);
          ASSERT_EQ(with_dropout.size(), alone.size());
          for (std::size_t i = 0; i < alone.size(); ++i) {
            ASSERT_NEAR(with_dropout[i], alone[i], 1e-6f * (1.0f + std::abs(alone[i]))) << "entry " << i;
          }
        }
        ++compared;
      }
    }
  }
  EXPECT_GE(compared, 14);
  MPI_Comm_free(&present_ranks);
}

}  // namespace
}  // namespace lowcomm
