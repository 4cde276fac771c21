// `lowcomm plan`'s prices are what a run pays: for every built-in compressor at every granularity
// it supports, the bytes, calls and modelled time that probe_step_traffic + price_step_traffic
// predict for one CompressedAllReduce step equal what the Communicator counts when the step
// really runs on this many ranks; and for every built-in strategy, StrategyInfo::syncs priced
// that way, summed over their periods, equals a run's counters over several steps.
#include <gtest/gtest.h>
#include <mpi.h>

#include <memory>
#include <random>

#include "lowcomm/comm/communicator.hpp"
#include "lowcomm/comm/network_config.hpp"
#include "lowcomm/compress/compressed_all_reduce.hpp"
#include "lowcomm/compress/registry.hpp"
#include "lowcomm/compress/traffic.hpp"
#include "lowcomm/error.hpp"
#include "lowcomm/strategy/registry.hpp"
#include "../compress/forwarding_compressor.hpp"

namespace lowcomm {
namespace {

const std::vector<TensorInfo> kTensors = {
    {"wte", {96, 64}}, {"bias", {31}}, {"prime", {7, 13}}, {"mlp", {128, 64}}, {"scalar", {}}, {"out", {64, 128}}};

int world_size() {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

CommunicatorOptions consumer_links() {
  return {.network = NetworkModel(Link{.latency_s = 0.03, .upload_bytes_per_s = mbps(10), .download_bytes_per_s = mbps(100)}),
          .mode = NetworkMode::Simulate};
}

std::vector<std::vector<float>> gradients(int rank, std::uint64_t step) {
  std::mt19937 random(static_cast<unsigned>(1000 * rank + step));
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<std::vector<float>> g;
  for (const TensorInfo& t : kTensors) {
    g.emplace_back(static_cast<std::size_t>(t.numel()));
    for (float& x : g.back()) x = normal(random);
  }
  return g;
}

template <class T>
std::vector<std::span<T>> spans(std::vector<std::vector<float>>& buffers) {
  std::vector<std::span<T>> views;
  for (std::vector<float>& b : buffers) views.emplace_back(b);
  return views;
}

void expect_same_traffic(const StepTraffic& planned, const CommCounters& counted, int rank, double steps) {
  const auto r = static_cast<std::size_t>(rank);
  EXPECT_DOUBLE_EQ(steps * static_cast<double>(planned.calls), static_cast<double>(counted.calls));
  EXPECT_DOUBLE_EQ(steps * static_cast<double>(planned.bytes_sent[r]), static_cast<double>(counted.bytes_sent));
  EXPECT_DOUBLE_EQ(steps * static_cast<double>(planned.bytes_received[r]), static_cast<double>(counted.bytes_received));
  EXPECT_NEAR(steps * planned.modelled_s, counted.modelled_s, 1e-9 * counted.modelled_s);
}

TEST(TrafficPlan, EveryCompressorAtEveryGranularityPricesWhatItsStepCounts) {
  ConfigSchema schema;
  CompressorRegistry::global().add_config_keys(schema);
  std::vector<std::vector<std::string>> cases;
  for (const CompressorInfo* info : CompressorRegistry::global().all()) {
    for (const char* granularity : {"tensor", "bucket", "global"}) {
      cases.push_back({"compressor.name=" + info->name, std::string("compressor.granularity=") + granularity,
                       "compressor.bucket_mb=0.01"});
    }
  }
  // Wire variants whose sizes differ: 16-bit sums, compact indices, one-bit values.
  cases.push_back({"compressor.name=none", "compressor.none.value_type=bf16"});
  cases.push_back({"compressor.name=topk", "compressor.topk.index_width=smallest", "compressor.granularity=bucket",
                   "compressor.bucket_mb=0.01"});
  cases.push_back({"compressor.name=dct_topk", "compressor.dct_topk.wire=compact_1bit", "compressor.dct_topk.topk=3"});
  cases.push_back({"compressor.name=powersgd", "compressor.powersgd.rank=3"});

  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int tried = 0;
  for (const std::vector<std::string>& settings : cases) {
    SCOPED_TRACE(testing::PrintToString(settings));
    const Config config = Config::defaults(schema, settings);
    const Granularity granularity = parse_granularity(config.get_string("compressor.granularity"));
    std::unique_ptr<Compressor> probe;
    try {
      probe = CompressorRegistry::global().create(config);
    } catch (const ConfigError&) {
      continue;  // a granularity this compressor refuses
    }
    ++tried;
    const std::uint64_t bucket = 10486;  // 0.01 MiB
    const StepTraffic planned = price_step_traffic(
        probe_step_traffic(*probe, kTensors, granularity, bucket, world_size(), 7, {}, 0), consumer_links(), world_size());

    Communicator comm(MPI_COMM_WORLD, consumer_links());
    CompressedAllReduce sync(comm, CompressorRegistry::global().create(config), kTensors, granularity, bucket, 7, {});
    std::vector<std::vector<float>> g = gradients(rank, 0), out = gradients(rank, 1);
    const SyncReport report = sync.run(0, spans<const float>(g), spans<float>(out));
    EXPECT_EQ(planned.payload_bytes, report.payload_bytes);
    expect_same_traffic(planned, report.comm, rank, 1.0);
  }
  EXPECT_GE(tried, 14);
}

TEST(TrafficPlan, UndeclaredSizesPayForTheirSizeTablesAndCounts) {
  ConfigSchema schema;
  CompressorRegistry::global().add_config_keys(schema);
  const Config config = Config::defaults(schema, std::vector<std::string>{"compressor.name=topk"});
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  UndeclaredSizes probe(CompressorRegistry::global().create(config));
  const std::vector<RoundCollectives> rounds =
      probe_step_traffic(probe, kTensors, Granularity::PerTensor, 1, world_size(), 7, {}, 0);
  ASSERT_EQ(rounds.size(), 1u);
  EXPECT_TRUE(rounds[0].sizes_gathered);
  EXPECT_EQ(rounds[0].gathered_bytes, rounds[0].payload_bytes + 4 * kTensors.size());  // one uint32 per payload
  const StepTraffic planned = price_step_traffic(rounds, consumer_links(), world_size());
  EXPECT_EQ(planned.calls, 2u);

  Communicator comm(MPI_COMM_WORLD, consumer_links());
  CompressedAllReduce sync(comm, std::make_unique<UndeclaredSizes>(CompressorRegistry::global().create(config)),
                           kTensors, Granularity::PerTensor, 1, 7, {});
  std::vector<std::vector<float>> g = gradients(rank, 0), out = gradients(rank, 1);
  const SyncReport report = sync.run(0, spans<const float>(g), spans<float>(out));
  EXPECT_EQ(planned.payload_bytes, report.payload_bytes);
  expect_same_traffic(planned, report.comm, rank, 1.0);
}

// A run configured with dropout pays nothing extra on a step where every rank is present.
TEST(TrafficPlan, AStepWithEveryonePresentCostsWhatItCostsWithoutDropout) {
  ConfigSchema schema;
  CompressorRegistry::global().add_config_keys(schema);
  const Config config = Config::defaults(schema, std::vector<std::string>{"compressor.name=topk"});
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::unique_ptr<Compressor> probe = CompressorRegistry::global().create(config);
  const StepTraffic planned = price_step_traffic(
      probe_step_traffic(*probe, kTensors, Granularity::PerTensor, 1, world_size(), 7, {}, 0), consumer_links(),
      world_size());
  Communicator comm(MPI_COMM_WORLD, consumer_links());
  CompressedAllReduce sync(comm, CompressorRegistry::global().create(config), kTensors, Granularity::PerTensor, 1, 7,
                           {}, Participation(world_size(), 0.0, {{.rank = 0, .first = 5, .last = 5}}, 7));
  std::vector<std::vector<float>> g = gradients(rank, 0), out = gradients(rank, 1);
  const SyncReport report = sync.run(0, spans<const float>(g), spans<float>(out));
  expect_same_traffic(planned, report.comm, rank, 1.0);
}

TEST(TrafficPlan, EveryStrategysPlannedSyncsPriceWhatItsRunCounts) {
  const std::vector<std::vector<std::string>> cases = {
      {"strategy.name=data_parallel", "compressor.name=none"},
      {"strategy.name=data_parallel", "compressor.name=topk", "compressor.granularity=global"},
      {"strategy.name=data_parallel", "compressor.name=powersgd"},
      {"strategy.name=data_parallel", "strategy.data_parallel.overlap=true", "compressor.name=none",
       "compressor.granularity=bucket", "compressor.bucket_mb=0.02"},
      {"strategy.name=demo", "compressor.dct_topk.topk=4"},
      {"strategy.name=demo", "strategy.demo.transport=topk", "compressor.topk.ratio=0.05"},
      {"strategy.name=diloco", "strategy.diloco.inner_steps=3", "compressor.name=quantize"},
      {"strategy.name=diloco", "strategy.diloco.inner_steps=3", "strategy.diloco.fragments=3"},
      {"strategy.name=data_parallel", "compressor.name=topk", "compressor.topk.exchange=tree"},  // gTop-k's butterfly
      {"strategy.name=data_parallel", "compressor.name=topk", "compressor.topk.exchange=tree",
       "compressor.merge_groups=\"2\""},  // regional: pairs of ranks
      {"strategy.name=onebit_adam", "strategy.onebit_adam.freeze_step=0"},  // priced by the strategy itself
  };
  ConfigSchema schema;
  add_strategy_keys(schema);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  constexpr std::uint64_t kSteps = 6;  // two periods of the DiLoCo cases
  for (const std::vector<std::string>& settings : cases) {
    SCOPED_TRACE(testing::PrintToString(settings));
    const Config config = Config::defaults(schema, settings);
    const StrategyInfo& info = StrategyRegistry::global().find(config.get_string("strategy.name"));
    ASSERT_TRUE(info.syncs);
    double calls = 0, sent = 0, received = 0, seconds = 0;
    for (PlannedSync& sync : info.syncs(config, kTensors)) {
      const StepTraffic t =
          sync.price ? sync.price(world_size(), consumer_links())
                     : price_step_traffic(probe_step_traffic(*sync.compressor,
                                                             std::span(kTensors).subspan(sync.first, sync.count),
                                                             sync.granularity, sync.bucket_bytes, world_size(), 42, {}, 0),
                                          consumer_links(), world_size(),
                                          merge_groups_from_rule(config, sync.merge_groups, world_size()));
      const double runs = static_cast<double>(kSteps / sync.period);
      calls += runs * static_cast<double>(t.calls);
      sent += runs * static_cast<double>(t.bytes_sent[static_cast<std::size_t>(rank)]);
      received += runs * static_cast<double>(t.bytes_received[static_cast<std::size_t>(rank)]);
      seconds += runs * t.modelled_s;
    }

    Communicator comm(MPI_COMM_WORLD, consumer_links());
    std::unique_ptr<Strategy> strategy =
        StrategyRegistry::global().create({.comm = comm, .tensors = kTensors, .config = config, .seed = 42});
    std::vector<std::vector<float>> params = gradients(99, 0);
    for (std::uint64_t s = 0; s < kSteps; ++s) {
      std::vector<std::vector<float>> g = gradients(rank, s);
      strategy->step(s, 0.01, spans<float>(params), spans<const float>(g));
    }
    const CommCounters counted = comm.totals();
    EXPECT_DOUBLE_EQ(calls, static_cast<double>(counted.calls));
    EXPECT_DOUBLE_EQ(sent, static_cast<double>(counted.bytes_sent));
    EXPECT_DOUBLE_EQ(received, static_cast<double>(counted.bytes_received));
    EXPECT_NEAR(seconds, counted.modelled_s, 1e-9 * counted.modelled_s);
  }
}

}  // namespace
}  // namespace lowcomm
