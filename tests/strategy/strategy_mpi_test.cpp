// The semantics of the built-in strategies on the quadratic problem (quadratic_problem.hpp), at
// 1, 2, 3 and 4 ranks: data-parallel equals one process training on every rank's batch, DiLoCo
// reduces to data-parallel SGD and follows an independent simulation of REFERENCE.md §4 (sign of
// the pseudo-gradient, direction of the α mix, fragment schedule), restored runs continue bitwise
// identically, and the bytes each strategy reports are what its wire format implies.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>

#include "lowcomm/comm/communicator.hpp"
#include "lowcomm/comm/network_config.hpp"
#include "lowcomm/comm/participation.hpp"
#include "lowcomm/error.hpp"
#include "lowcomm/kernels/blocks.hpp"
#include "lowcomm/optim/registry.hpp"
#include "quadratic_problem.hpp"
#include "support/test_backend.hpp"

namespace lowcomm::test {
namespace {

// The strategies compute on the test backend (LOWCOMM_TEST_BACKEND); all skip where it cannot run.
const auto* const kSkipWithoutBackend = ::testing::AddGlobalTestEnvironment(new SkipWithoutTestBackend);

int world_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}
int world_size() {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

double lr_at(std::uint64_t step) { return 0.05 * (1.0 - 0.02 * static_cast<double>(step)); }

struct TrainedRun {
  std::vector<float> params;
  std::vector<StrategyStepReport> reports;
  StateDict state;
};

// Trains from `params` for steps [first, first + steps), restoring `restore` first when given.
TrainedRun train(const Config& config, std::uint64_t first, std::uint64_t steps, std::vector<float> params,
          const StateDict* restore = nullptr) {
  Communicator comm(MPI_COMM_WORLD, test::test_communicator_options());
  std::unique_ptr<Strategy> strategy =
      StrategyRegistry::global().create({.comm = comm, .tensors = kModel, .config = config, .seed = 42,
                                         .execution = test_execution()});
  if (restore) strategy->load_state(*restore, "strategy/");
  TrainedRun run;
  for (std::uint64_t s = first; s < first + steps; ++s) {
    std::vector<float> g = gradient(world_rank(), s, params);
    const std::vector<std::span<float>> p = views(std::span<float>(params));
    const std::vector<std::span<const float>> gv = views(std::span<const float>(g));
    run.reports.push_back(strategy->step(s, lr_at(s), p, gv));
  }
  strategy->save_state(run.state, "strategy/");
  run.params = std::move(params);
  return run;
}

void expect_close(std::span<const float> actual, std::span<const float> expected, double tolerance) {
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t i = 0; i < actual.size(); ++i) {
    ASSERT_NEAR(actual[i], expected[i], tolerance * (1.0 + std::abs(expected[i]))) << "element " << i;
  }
}

// Rank 0's vector, on every rank.
std::vector<float> from_rank_zero(std::vector<float> v) {
  MPI_Bcast(v.data(), static_cast<int>(v.size()), MPI_FLOAT, 0, MPI_COMM_WORLD);
  return v;
}

TEST(DataParallel, NoneEqualsOneProcessTrainingOnEveryRanksBatch) {
  for (const char* optimizer : {"sgd", "adamw"}) {
    SCOPED_TRACE(optimizer);
    const Config config = strategy_config({"strategy.name=data_parallel", std::string("optimizer.name=") + optimizer,
                                           "optimizer.sgd.momentum=0.9", "compressor.name=none"});
    const TrainedRun run = train(config, 0, 6, initial_params());

    // One process: the mean of all ranks' gradients, the same optimizer.
    std::vector<float> x = initial_params();
    const std::unique_ptr<Optimizer> reference = make_optimizer(config);
    const int w = world_size();
    for (std::uint64_t s = 0; s < 6; ++s) {
      std::vector<float> mean(x.size(), 0.0f);
      for (int r = 0; r < w; ++r) {
        const std::vector<float> g = gradient(r, s, x);
        for (std::size_t i = 0; i < x.size(); ++i) mean[i] += g[i];
      }
      for (float& m : mean) m /= static_cast<float>(w);
      reference->step(views(std::span<float>(x)), views(std::span<const float>(mean)), lr_at(s));
    }
    expect_close(run.params, x, 1e-5);
    const std::vector<float> zero = from_rank_zero(run.params);
    EXPECT_EQ(std::memcmp(zero.data(), run.params.data(), zero.size() * sizeof(float)), 0)
        << "ranks diverged";
  }
}

TEST(Diloco, OneInnerStepWithPlainOuterSgdEqualsDataParallelSgd) {
  const TrainedRun dp = train(strategy_config({"strategy.name=data_parallel", "optimizer.name=sgd"}), 0, 5,
                       initial_params());
  const TrainedRun diloco = train(strategy_config({"strategy.name=diloco", "optimizer.name=sgd",
                                            "strategy.diloco.inner_steps=1", "strategy.diloco.outer_lr=1",
                                            "strategy.diloco.outer_momentum=0"}),
                           0, 5, initial_params());
  expect_close(diloco.params, dp.params, 1e-5);
}

TEST(Diloco, AlphaZeroKeepsTheLocalParametersAndAlphaOneTakesTheGlobalOnes) {
  // α = 0: the mix keeps x_local, so the parameters are those of training alone.
  const TrainedRun alone = train(strategy_config({"strategy.name=diloco", "optimizer.name=sgd",
                                           "strategy.diloco.inner_steps=1000"}),
                          0, 6, initial_params());
  const TrainedRun alpha0 = train(strategy_config({"strategy.name=diloco", "optimizer.name=sgd",
                                            "strategy.diloco.inner_steps=2", "strategy.diloco.overlap_steps=1",
                                            "strategy.diloco.alpha=0"}),
                           0, 6, initial_params());
  EXPECT_EQ(alpha0.params, alone.params);
  // α = 1 with τ = 0: every rank holds the same global parameters after each sync.
  const TrainedRun alpha1 = train(strategy_config({"strategy.name=diloco", "optimizer.name=sgd",
                                            "strategy.diloco.inner_steps=2", "strategy.diloco.alpha=1"}),
                           0, 6, initial_params());
  EXPECT_EQ(from_rank_zero(alpha1.params), alpha1.params);
}

// The pseudo-gradient's exchange through a lossy compressor: top-k of each tensor with error
// feedback (REFERENCE.md §2), k entries by largest |Δ + e| (ties: lower index), e keeps the rest,
// the mean over ranks of what was sent. k = 0: the exact mean. Peers that drop out: an absent
// rank sends nothing (its e keeps all of Δ + e) and the mean is over the ranks present.
struct TopkExchange {
  std::size_t k = 0;
  std::vector<std::vector<double>> residual;  // per rank, over the whole model

  // deltas[r][i - begin]: rank r's Δ over [begin, end); returns the exchanged mean.
  std::vector<double> mean(std::vector<std::vector<double>> deltas, std::size_t begin, std::size_t end,
                           const std::vector<bool>& present = {}) {
    const std::size_t w = deltas.size();
    const auto here = [&](std::size_t r) { return present.empty() || present[r]; };
    std::size_t participants = 0;
    for (std::size_t r = 0; r < w; ++r) participants += here(r) ? 1 : 0;
    std::vector<double> sum(end - begin, 0.0);
    if (residual.empty()) residual.assign(w, std::vector<double>(model_size(), 0.0));
    std::size_t offset = 0;
    for (const TensorInfo& t : kModel) {  // units: the tensors of the fragment
      const auto n = static_cast<std::size_t>(t.numel());
      const std::size_t first = offset;
      offset += n;
      if (first < begin || first >= end) continue;
      for (std::size_t r = 0; r < w; ++r) {
        std::vector<double> corrected(n);
        for (std::size_t i = 0; i < n; ++i) {
          corrected[i] = deltas[r][first - begin + i] + (k > 0 ? residual[r][first + i] : 0.0);
        }
        std::vector<std::size_t> order(n);
        for (std::size_t i = 0; i < n; ++i) order[i] = i;
        std::stable_sort(order.begin(), order.end(),
                         [&](std::size_t a, std::size_t b) { return std::abs(corrected[a]) > std::abs(corrected[b]); });
        const std::size_t kept = !here(r) ? 0 : k == 0 ? n : std::min(k, n);
        for (std::size_t j = 0; j < n; ++j) {
          const std::size_t i = order[j];
          const bool sent = j < kept;
          if (sent) sum[first - begin + i] += corrected[i];
          if (k > 0) residual[r][first + i] = sent ? 0.0 : corrected[i];
        }
      }
    }
    for (double& v : sum) v /= static_cast<double>(participants);
    return sum;
  }
};

// REFERENCE.md §4 written out for all ranks in one process, in double: streaming fragments,
// τ-step overlap, α mix, Nesterov outer momentum, inner SGD; the exchange exact or top-k + EF.
std::vector<float> simulate_streaming_diloco(int w, int steps, int h, int overlap, double alpha,
                                             double outer_lr, double mu, std::size_t topk = 0,
                                             double dropout = 0.0) {
  const Participation who(w, dropout, {}, 42);  // the run's draws (seed 42); their effect is simulated here
  TopkExchange exchange{.k = topk, .residual = {}};
  const std::size_t n = model_size();
  // Fragments as lowcomm cuts kModel into two of about equal size: "weight" (96 values), the rest.
  const std::vector<std::pair<std::size_t, std::size_t>> fragments = {{0, 96}, {96, n}};
  std::vector<std::vector<double>> x(static_cast<std::size_t>(w));
  const std::vector<float> x0 = initial_params();
  for (auto& xw : x) xw.assign(x0.begin(), x0.end());
  std::vector<double> anchor = x[0], b(n, 0.0);
  struct Pending { int step; std::size_t fragment; std::vector<double> global; };
  std::vector<Pending> pending;
  for (int s = 0; s < steps; ++s) {
    for (int r = 0; r < w; ++r) {
      const std::vector<float> xf(x[r].begin(), x[r].end());
      const std::vector<float> g = gradient(r, static_cast<std::uint64_t>(s), xf);
      for (std::size_t i = 0; i < n; ++i) x[r][i] -= lr_at(static_cast<std::uint64_t>(s)) * g[i];
    }
    for (std::size_t f = 0; f < fragments.size(); ++f) {
      const auto [begin, end] = fragments[f];
      if ((s + 1) % h == static_cast<int>((f + 1) * static_cast<std::size_t>(h) / fragments.size()) % h) {
        std::vector<double> global(end - begin);
        std::vector<std::vector<double>> deltas(static_cast<std::size_t>(w), std::vector<double>(end - begin));
        for (int r = 0; r < w; ++r) {
          for (std::size_t i = begin; i < end; ++i) deltas[static_cast<std::size_t>(r)][i - begin] = anchor[i] - x[r][i];
        }
        // The mean of (old − new) over the ranks present.
        const std::vector<double> mean = exchange.mean(deltas, begin, end, who.present(static_cast<std::uint64_t>(s)));
        for (std::size_t i = begin; i < end; ++i) {
          const double delta = mean[i - begin];
          b[i] = mu * b[i] + delta;
          anchor[i] -= outer_lr * (delta + mu * b[i]);
          global[i - begin] = anchor[i];
        }
        pending.push_back({s + overlap, f, global});
      }
      for (auto it = pending.begin(); it != pending.end();) {
        if (it->step == s && it->fragment == f) {
          for (int r = 0; r < w; ++r) {
            for (std::size_t i = begin; i < end; ++i) {
              x[r][i] += alpha * (it->global[i - begin] - x[r][i]);  // lerp(x_local, x_global, α)
            }
          }
          it = pending.erase(it);
        } else {
          ++it;
        }
      }
    }
  }
  return {x[static_cast<std::size_t>(world_rank())].begin(), x[static_cast<std::size_t>(world_rank())].end()};
}

TEST(Diloco, StreamingMatchesAnIndependentSimulation) {
  const TrainedRun run = train(strategy_config({"strategy.name=diloco", "optimizer.name=sgd",
                                         "strategy.diloco.inner_steps=4", "strategy.diloco.fragments=2",
                                         "strategy.diloco.overlap_steps=1", "strategy.diloco.alpha=0.5",
                                         "strategy.diloco.outer_lr=0.7", "strategy.diloco.outer_momentum=0.9"}),
                        0, 12, initial_params());
  expect_close(run.params, simulate_streaming_diloco(world_size(), 12, 4, 1, 0.5, 0.7, 0.9), 2e-5);
}

// The same through a lossy compressor: top-k (k = 5 per tensor) with error feedback.
TEST(Diloco, StreamingThroughTopkWithErrorFeedbackMatchesAnIndependentSimulation) {
  const TrainedRun run = train(strategy_config({"strategy.name=diloco", "optimizer.name=sgd",
                                         "strategy.diloco.inner_steps=4", "strategy.diloco.fragments=2",
                                         "strategy.diloco.overlap_steps=1", "strategy.diloco.alpha=0.5",
                                         "strategy.diloco.outer_lr=0.7", "strategy.diloco.outer_momentum=0.9",
                                         "compressor.name=topk", "compressor.topk.k=5",
                                         "compressor.topk.error_feedback=true"}),
                        0, 12, initial_params());
  const std::vector<float> exact = simulate_streaming_diloco(world_size(), 12, 4, 1, 0.5, 0.7, 0.9);
  expect_close(run.params, simulate_streaming_diloco(world_size(), 12, 4, 1, 0.5, 0.7, 0.9, 5), 2e-5);
  double moved = 0;  // the compressor changes the trajectory far beyond the tolerance
  for (std::size_t i = 0; i < exact.size(); ++i) moved = std::max(moved, std::abs(double(run.params[i]) - exact[i]));
  EXPECT_GT(moved, 1e-2);
}

// Peers that drop out (cluster.dropout): each sync averages the pseudo-gradients of the ranks
// present, and an absent rank's error feedback keeps all it did not send.
Config with_network_keys(const std::vector<std::string>& overrides) {
  ConfigSchema schema;
  add_strategy_keys(schema, "sgd");
  add_network_keys(schema);
  return Config::defaults(schema, overrides);
}

TEST(Dropout, StreamingDilocoAveragesOverThePresentRanksAsAnIndependentSimulation) {
  if (world_size() < 2) GTEST_SKIP() << "dropout needs two ranks";
  const std::vector<std::string> base = {"strategy.name=diloco", "optimizer.name=sgd",
                                         "strategy.diloco.inner_steps=2", "strategy.diloco.fragments=2",
                                         "strategy.diloco.outer_lr=0.7", "strategy.diloco.outer_momentum=0.9",
                                         "cluster.dropout=0.4"};
  const TrainedRun exact = train(with_network_keys(base), 0, 12, initial_params());
  expect_close(exact.params, simulate_streaming_diloco(world_size(), 12, 2, 0, 1.0, 0.7, 0.9, 0, 0.4), 2e-5);
  std::vector<std::string> lossy = base;
  for (const char* s : {"compressor.name=topk", "compressor.topk.k=5", "compressor.topk.error_feedback=true"}) {
    lossy.emplace_back(s);
  }
  const TrainedRun topk = train(with_network_keys(lossy), 0, 12, initial_params());
  expect_close(topk.params, simulate_streaming_diloco(world_size(), 12, 2, 0, 1.0, 0.7, 0.9, 5, 0.4), 2e-5);
  // The draws left someone out on some sync, so dropout changed the result.
  const std::vector<float> everyone = simulate_streaming_diloco(world_size(), 12, 2, 0, 1.0, 0.7, 0.9);
  double moved = 0;
  for (std::size_t i = 0; i < everyone.size(); ++i) moved = std::max(moved, std::abs(double(exact.params[i]) - everyone[i]));
  EXPECT_GT(moved, 1e-3);
}

TEST(Dropout, DataParallelAppliesTheMeanOfThePresentRanksOnEveryReplica) {
  if (world_size() < 2) GTEST_SKIP() << "dropout needs two ranks";
  // Rank 1 is away for steps 1-3, and every other rank for step 4 and step 5 (rank 4 mod W stays).
  std::vector<std::string> settings = {"strategy.name=data_parallel", "optimizer.name=sgd", "compressor.name=none"};
  for (int r = 0; r < world_size(); ++r) {
    settings.push_back("cluster.rank." + std::to_string(r) + ".absent_steps=" + (r == 1 ? "1-3,4-5" : "4-5"));
  }
  const TrainedRun run = train(with_network_keys(settings), 0, 6, initial_params());
  const Participation who = participation_from_config(with_network_keys(settings), world_size(), 42);
  const std::vector<float> x0 = initial_params();
  std::vector<double> x(x0.begin(), x0.end());
  for (std::uint64_t s = 0; s < 6; ++s) {
    const std::vector<bool> present = who.present(s);
    std::vector<double> mean(x.size(), 0.0);
    int participants = 0;
    for (int r = 0; r < world_size(); ++r) {
      if (!present.empty() && !present[static_cast<std::size_t>(r)]) continue;
      ++participants;
      const std::vector<float> xf(x.begin(), x.end());
      const std::vector<float> g = gradient(r, s, xf);
      for (std::size_t i = 0; i < x.size(); ++i) mean[i] += g[i];
    }
    for (std::size_t i = 0; i < x.size(); ++i) x[i] -= lr_at(s) * mean[i] / participants;
  }
  expect_close(run.params, std::vector<float>(x.begin(), x.end()), 1e-5);
  EXPECT_EQ(from_rank_zero(run.params), run.params);
  // An absent rank sends nothing it is charged for beyond the ring's relaying: its payload is 0.
  EXPECT_EQ(run.reports[2].sync.payload_bytes, world_rank() == 1 ? 0u : 4u * model_size());
}

TEST(Diloco, RejectsInconsistentStreamingOptions) {
  Communicator comm(MPI_COMM_WORLD, test::test_communicator_options());
  const auto make = [&](std::vector<std::string> overrides) {
    overrides.push_back("strategy.name=diloco");
    const Config config = strategy_config(overrides);
    return StrategyRegistry::global().create(
        {.comm = comm, .tensors = kModel, .config = config, .execution = test_execution()});
  };
  EXPECT_THROW(make({"strategy.diloco.inner_steps=4", "strategy.diloco.overlap_steps=4"}), ConfigError);
  EXPECT_THROW(make({"strategy.diloco.inner_steps=2", "strategy.diloco.fragments=3"}), ConfigError);
  EXPECT_THROW(make({"strategy.diloco.inner_steps=100", "strategy.diloco.fragments=5"}), ConfigError);
  EXPECT_THROW(make({"strategy.diloco.outer_momentum=1"}), ConfigError);
}

// Every registered strategy's examples (StrategyInfo::examples): the list is the registration's,
// so a new strategy is resumed here without a line of its own.
std::vector<StrategyExample> registered_examples() {
  std::vector<StrategyExample> all;
  for (const StrategyInfo* info : StrategyRegistry::global().all()) {
    all.insert(all.end(), info->examples.begin(), info->examples.end());
  }
  return all;
}

TEST(EveryStrategy, HasAnExampleToTrainAndResume) {
  for (const StrategyInfo* info : StrategyRegistry::global().all()) {
    EXPECT_FALSE(info->examples.empty()) << info->name << " registers no example (StrategyInfo::examples)";
    for (const StrategyExample& example : info->examples) {
      EXPECT_NE(std::ranges::find(example.settings, "strategy.name=" + info->name), example.settings.end())
          << example.label << " does not set strategy.name=" << info->name;
    }
  }
}

class EveryStrategy : public testing::TestWithParam<StrategyExample> {};

TEST_P(EveryStrategy, RestoredRunContinuesBitwiseIdentically) {
  const Config config = strategy_config(GetParam().settings);
  const TrainedRun straight = train(config, 0, 8, initial_params());
  const TrainedRun again = train(config, 0, 8, initial_params());
  EXPECT_EQ(straight.params, again.params) << "same config and seed differ";

  const TrainedRun first = train(config, 0, 3, initial_params());
  const TrainedRun resumed = train(config, 3, 5, first.params, &first.state);
  EXPECT_EQ(resumed.params, straight.params);
  EXPECT_TRUE(resumed.state == straight.state);
}

INSTANTIATE_TEST_SUITE_P(Strategies, EveryStrategy, testing::ValuesIn(registered_examples()),
                         [](const testing::TestParamInfo<StrategyExample>& info) { return info.param.label; });

TEST(Bytes, DemoSendsBlocksTimesKTimesTwelveBytesWithTheReferenceWire) {
  const Config config = strategy_config({"strategy.name=demo", "strategy.demo.compression_chunk=4",
                                         "strategy.demo.compression_topk=3"});
  const TrainedRun run = train(config, 0, 2, initial_params());
  std::uint64_t expected = 0;
  for (const TensorInfo& t : kModel) {
    const kernels::BlockLayout layout = kernels::block_layout(t.shape, 4);
    expected += static_cast<std::uint64_t>(layout.blocks() * std::min<std::int64_t>(3, layout.block_size())) * 12;
  }
  for (const StrategyStepReport& r : run.reports) {
    EXPECT_TRUE(r.synchronized);
    EXPECT_EQ(r.sync.payload_bytes, expected);
  }
}

// The stale pipeline overlaps its exchange with the next step; every step still sends, and
// receives, exactly what the blocking step does.
TEST(Bytes, DemoStalePipelineSendsWhatTheBlockingStepSends) {
  const std::vector<std::string> keys{"strategy.name=demo", "strategy.demo.compression_chunk=4",
                                      "strategy.demo.compression_topk=3"};
  std::vector<std::string> stale_keys = keys;
  stale_keys.emplace_back("strategy.demo.pipeline=stale");
  const TrainedRun blocking = train(strategy_config(keys), 0, 3, initial_params());
  const TrainedRun stale = train(strategy_config(stale_keys), 0, 3, initial_params());
  ASSERT_EQ(stale.reports.size(), blocking.reports.size());
  for (std::size_t s = 0; s < stale.reports.size(); ++s) {
    EXPECT_EQ(stale.reports[s].sync.comm.bytes_sent, blocking.reports[s].sync.comm.bytes_sent) << "step " << s;
    EXPECT_EQ(stale.reports[s].sync.comm.bytes_received, blocking.reports[s].sync.comm.bytes_received) << "step " << s;
    EXPECT_EQ(stale.reports[s].sync.payload_bytes, blocking.reports[s].sync.payload_bytes) << "step " << s;
  }
}

TEST(Bytes, DilocoSendsNothingOnInnerStepsAndItsFragmentOnSyncSteps) {
  const Config config = strategy_config({"strategy.name=diloco", "strategy.diloco.inner_steps=4",
                                         "strategy.diloco.fragments=2"});
  const TrainedRun run = train(config, 0, 8, initial_params());
  for (std::size_t s = 0; s < run.reports.size(); ++s) {
    const StrategyStepReport& r = run.reports[s];
    const bool due = (s + 1) % 4 == 2 || (s + 1) % 4 == 0;
    EXPECT_EQ(r.synchronized, due) << "step " << s;
    const std::uint64_t fragment_values = (s + 1) % 4 == 2 ? 96 : model_size() - 96;
    EXPECT_EQ(r.sync.payload_bytes, due ? fragment_values * sizeof(float) : 0) << "step " << s;
    if (!due) EXPECT_EQ(r.sync.comm.bytes_sent, 0u);
  }
}

// DDP's bucketed overlap: buckets handed over as the "backward pass" finishes them (last tensor
// first), each its own all-reduce: the parameters of the blocking fused exchange (bitwise where
// the sum's order cannot differ), the bytes of one ring all-reduce per bucket.
TEST(DataParallel, OverlappedBucketsGiveTheBlockingResult) {
  const std::vector<std::string> keys{"strategy.name=data_parallel", "optimizer.name=sgd",
                                      "compressor.granularity=bucket", "compressor.bucket_mb=0.0003"};
  std::vector<std::string> overlap_keys = keys;
  overlap_keys.emplace_back("strategy.data_parallel.overlap=true");
  const TrainedRun blocking = train(strategy_config(keys), 0, 3, initial_params());

  Communicator comm(MPI_COMM_WORLD, test::test_communicator_options());
  const std::unique_ptr<Strategy> overlapped = StrategyRegistry::global().create(
      {.comm = comm, .tensors = kModel, .config = strategy_config(overlap_keys), .seed = 42,
       .execution = test_execution()});
  std::vector<float> params = initial_params();
  std::uint64_t sent = 0;
  for (std::uint64_t s = 0; s < 3; ++s) {
    const std::vector<float> g = gradient(world_rank(), s, params);
    const std::vector<std::span<const float>> gv = views(std::span<const float>(g));
    for (std::size_t t = kModel.size(); t-- > 0;) overlapped->gradients_ready(s, std::vector<std::size_t>{t}, gv);
    sent += overlapped->step(s, lr_at(s), views(std::span<float>(params)), gv).sync.comm.bytes_sent;
  }
  if (world_size() <= 2) {
    EXPECT_EQ(params, blocking.params);
  } else {
    expect_close(params, blocking.params, 1e-6);
  }
  // bucket_mb = 0.0003 (315 bytes, 78 floats): weight (96 floats) alone, then prime, bias and
  // scale (65 + 12 + 1).
  std::uint64_t expected = 0;
  const NetworkModel model;
  for (const std::uint64_t count : {96, 78}) {
    expected += model.all_reduce(AllReduceAlgorithm::Ring, world_size(), count, 4).bytes_sent[static_cast<std::size_t>(world_rank())];
  }
  EXPECT_EQ(sent, 3 * expected);

  // Refused where a cancelled step would leave state behind, or clipping needs every gradient.
  std::vector<std::string> topk = overlap_keys;
  topk.emplace_back("compressor.name=topk");
  EXPECT_THROW(StrategyRegistry::global().create(
                   {.comm = comm, .tensors = kModel, .config = strategy_config(topk), .execution = test_execution()}),
               ConfigError);
  EXPECT_THROW(StrategyRegistry::global().create({.comm = comm, .tensors = kModel, .config = strategy_config(overlap_keys),
                                                  .execution = test_execution(), .gradients_clipped = true}),
               ConfigError);
  // The default tensor granularity is refused for its own reason.
  try {
    StrategyRegistry::global().create(
        {.comm = comm, .tensors = kModel,
         .config = strategy_config({"strategy.name=data_parallel", "strategy.data_parallel.overlap=true"}),
         .execution = test_execution()});
    ADD_FAILURE() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("compressor.granularity = \"bucket\" (got \"tensor\")"), std::string::npos)
        << e.what();
    EXPECT_EQ(std::string(e.what()).find("error feedback"), std::string::npos) << e.what();
  }
}

TEST(Demo, NamesTheConflictingCompressorKey) {
  Communicator comm(MPI_COMM_WORLD, test::test_communicator_options());
  const Config config = strategy_config({"strategy.name=demo", "compressor.name=topk"});
  try {
    StrategyRegistry::global().create(
        {.comm = comm, .tensors = kModel, .config = config, .execution = test_execution()});
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("strategy.demo.transport"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace lowcomm::test
