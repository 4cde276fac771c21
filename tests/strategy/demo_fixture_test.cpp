// The `demo` strategy against an independent PyTorch implementation of DeMo's step
// (tests/fixtures/make_demo_fixtures.py → demo.h5): parameters and every rank's momentum after
// each of five steps, at the world size of this run (2 or 3), with weight decay, a tensor whose
// first dimension is prime (blocks of length 1) and a 1-D tensor.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <fmt/format.h>

#include "fixtures/fixtures.hpp"
#include "lowcomm/comm/communicator.hpp"
#include "lowcomm/config/config.hpp"
#include "lowcomm/strategy/registry.hpp"

namespace lowcomm::test {
namespace {

const std::vector<TensorInfo> kTensors = {
    {"matrix", {16, 24}}, {"prime", {13, 8}}, {"vector", {30}}, {"wide", {4, 40}}};

TEST(DemoFixture, MatchesTheReferenceStepOverSeveralSteps) {
  int rank = 0, w = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &w);
  const FixtureFile file(LOWCOMM_DEMO_FIXTURES);
  const std::string group = fmt::format("/w{}", w);
  ASSERT_EQ(file.attr_int(group, "world_size"), w);
  const auto steps = static_cast<std::size_t>(file.attr_int(group, "steps"));
  const std::vector<double> lr = file.doubles(group + "/lr");

  ConfigSchema schema;
  add_strategy_keys(schema);
  const Config config = Config::defaults(
      schema, std::vector<std::string>{
                  "strategy.name=demo",
                  fmt::format("strategy.demo.compression_decay={}", file.attr_double(group, "compression_decay")),
                  fmt::format("strategy.demo.compression_topk={}", file.attr_int(group, "compression_topk")),
                  fmt::format("strategy.demo.compression_chunk={}", file.attr_int(group, "compression_chunk")),
                  fmt::format("strategy.demo.weight_decay={}", file.attr_double(group, "weight_decay"))});
  Communicator comm(MPI_COMM_WORLD, CommunicatorOptions{});
  const std::unique_ptr<Strategy> demo =
      StrategyRegistry::global().create({.comm = comm, .tensors = kTensors, .config = config, .seed = 0});

  std::vector<std::vector<float>> params, grads(kTensors.size()), all_grads, expected_params, expected_momenta;
  for (const TensorInfo& t : kTensors) {
    params.push_back(file.floats(group + "/init/" + t.name));
    all_grads.push_back(file.floats(group + "/grad/" + t.name));
    expected_params.push_back(file.floats(group + "/param/" + t.name));
    expected_momenta.push_back(file.floats(group + "/momentum/" + t.name));
  }
  for (std::size_t s = 0; s < steps; ++s) {
    std::vector<std::span<float>> p;
    std::vector<std::span<const float>> g;
    for (std::size_t t = 0; t < kTensors.size(); ++t) {
      const auto n = static_cast<std::size_t>(kTensors[t].numel());
      const auto begin = all_grads[t].begin() + static_cast<std::ptrdiff_t>((s * static_cast<std::size_t>(w) + static_cast<std::size_t>(rank)) * n);
      grads[t].assign(begin, begin + static_cast<std::ptrdiff_t>(n));
      p.emplace_back(params[t]);
      g.emplace_back(grads[t]);
    }
    demo->step(s, lr[s], p, g);

    StateDict state;
    demo->save_state(state, "");
    for (std::size_t t = 0; t < kTensors.size(); ++t) {
      SCOPED_TRACE(fmt::format("step {}, tensor '{}'", s, kTensors[t].name));
      const auto n = static_cast<std::size_t>(kTensors[t].numel());
      const std::vector<float>& momentum = state.floats(fmt::format("momentum/residual/{}", t));
      for (std::size_t i = 0; i < n; ++i) {
        const float want_param = expected_params[t][s * n + i];
        ASSERT_NEAR(params[t][i], want_param, 1e-5f * (1.0f + std::abs(want_param))) << "parameter " << i;
        const float want_momentum = expected_momenta[t][(s * static_cast<std::size_t>(w) + static_cast<std::size_t>(rank)) * n + i];
        ASSERT_NEAR(momentum[i], want_momentum, 1e-5f * (1.0f + std::abs(want_momentum))) << "momentum " << i;
      }
    }
  }
}

}  // namespace
}  // namespace lowcomm::test
