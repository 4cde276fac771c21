// Overlap on the simulated clock, with a known compute time between steps (a sleep standing for
// the forward and backward pass): streaming DiLoCo's exchange runs during the τ inner steps
// before its mix and DeMo's stale exchange during the next step, so that compute hides it; the
// blocking versions expose all of it. Runs at 2 and 3 ranks (one rank sends nothing).
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "lowcomm/comm/communicator.hpp"
#include "quadratic_problem.hpp"

namespace lowcomm::test {
namespace {

constexpr double kComputeS = 0.1;  // per step, longer than one exchange on the link below
// Latency-bound: a ring all-reduce at W ranks takes 2(W - 1) · 20 ms, whatever its size.
const NetworkModel kLink(Link{.latency_s = 0.02, .upload_bytes_per_s = 1e9, .download_bytes_per_s = 1e9});

struct Clocked {
  double modelled_s, exposed_s, hidden_s;
};

// Runs `steps` steps of the strategy with kComputeS of compute before each, settling the clock
// after each step as the training loop does.
Clocked run(const std::vector<std::string>& keys, std::uint64_t steps) {
  Communicator comm(MPI_COMM_WORLD, {.network = kLink, .mode = NetworkMode::Simulate});
  const std::unique_ptr<Strategy> strategy =
      StrategyRegistry::global().create({.comm = comm, .tensors = kModel, .config = strategy_config(keys), .seed = 1});
  std::vector<float> params = initial_params();
  double modelled = 0.0;
  for (std::uint64_t s = 0; s < steps; ++s) {
    std::this_thread::sleep_for(std::chrono::duration<double>(kComputeS));
    const std::vector<float> g = gradient(comm.rank(), s, params);
    modelled += strategy->step(s, 0.01, views(std::span<float>(params)), views(std::span<const float>(g))).sync.comm.modelled_s;
    comm.clock().settle();
  }
  return {modelled, comm.clock().overlap().exposed_s, comm.clock().overlap().hidden_s};
}

TEST(Overlap, StreamingDilocoHidesItsExchangeBehindTheInnerStepsBeforeTheMix) {
  const std::vector<std::string> diloco{"strategy.name=diloco", "strategy.diloco.inner_steps=4"};
  // Syncs at steps 3 and 7; with τ = 2 they are waited for at steps 5 and 9.
  std::vector<std::string> streaming = diloco;
  streaming.emplace_back("strategy.diloco.overlap_steps=2");
  const Clocked blocking = run(diloco, 10);
  const Clocked overlapped = run(streaming, 10);
  ASSERT_GT(blocking.modelled_s, 0.0);
  EXPECT_DOUBLE_EQ(overlapped.modelled_s, blocking.modelled_s);
  EXPECT_NEAR(blocking.exposed_s, blocking.modelled_s, 1e-9);
  EXPECT_NEAR(blocking.hidden_s, 0.0, 1e-12);
  // τ steps of compute (0.2 s) exceed each exchange: all of it hidden.
  EXPECT_NEAR(overlapped.hidden_s, overlapped.modelled_s, 1e-9);
  EXPECT_NEAR(overlapped.exposed_s, 0.0, 1e-9);
}

TEST(Overlap, DemoStaleHidesItsExchangeBehindTheNextStep) {
  const std::vector<std::string> demo{"strategy.name=demo", "strategy.demo.compression_chunk=4",
                                      "strategy.demo.compression_topk=3"};
  std::vector<std::string> stale = demo;
  stale.emplace_back("strategy.demo.pipeline=stale");
  const Clocked blocking = run(demo, 4);
  const Clocked overlapped = run(stale, 4);
  ASSERT_GT(blocking.modelled_s, 0.0);
  EXPECT_DOUBLE_EQ(overlapped.modelled_s, blocking.modelled_s);
  EXPECT_NEAR(blocking.exposed_s, blocking.modelled_s, 1e-9);
  // Exchanges 0-2 are waited for by the next step, behind its compute; the last is still in
  // flight when the run ends.
  const double per_exchange = blocking.modelled_s / 4;
  EXPECT_NEAR(overlapped.hidden_s, 3 * per_exchange, 1e-9);
  EXPECT_NEAR(overlapped.exposed_s, 0.0, 1e-9);
}

}  // namespace
}  // namespace lowcomm::test
