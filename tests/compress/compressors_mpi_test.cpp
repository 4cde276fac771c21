// Every registered compressor, at every granularity it supports, with and without error
// feedback, over several steps: the aggregate the MPI-driven CompressedAllReduce produces on each
// rank equals the same computation done in one process with all ranks' data (loopback.hpp).
// Runs at 1, 2, 3 and 4 ranks.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>

#include "loopback.hpp"
#include "lowcomm/compress/compressed_all_reduce.hpp"
#include "lowcomm/compress/registry.hpp"
#include "lowcomm/error.hpp"
#include "support/test_backend.hpp"

namespace lowcomm {
namespace {

const std::vector<TensorInfo> kTensors = {
    {"embedding", {50, 12}}, {"prime", {7, 13}}, {"bias", {31}}, {"scalar", {}}, {"conv", {3, 4, 5}}};

// The compressors compute on the test backend (tests/support/test_backend.hpp); the
// single-process twin uses the same one, so the two differ only in the order MPI sums.
using test::test_backend_unavailable;
using test::test_execution;

std::vector<float> gradient(int rank, std::uint64_t step, std::size_t tensor, std::int64_t n) {
  std::mt19937 random(static_cast<unsigned>(1000 * rank + 100 * step + tensor));
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> g(static_cast<std::size_t>(n));
  for (float& x : g) x = normal(random);
  return g;
}

struct Case {
  std::string compressor;
  std::string granularity;
  bool error_feedback;
  std::string variant = "";            // names the settings below in the test's name
  std::vector<std::string> settings{};  // over the compressor's defaults
};

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  ConfigSchema schema;
  CompressorRegistry::global().add_config_keys(schema);
  for (const CompressorInfo* info : CompressorRegistry::global().all()) {
    for (const char* granularity : {"tensor", "bucket", "global"}) {
      for (bool ef : {false, true}) cases.push_back({info->name, granularity, ef});
    }
  }
  // The shared wire encodings (value_encoding.hpp, index_encoding.hpp) on each sparse compressor;
  // randomk's leave the all-reduce for a gather.
  cases.push_back({"topk", "tensor", true, "codebook_smallest",
                   {"compressor.topk.value_type=codebook", "compressor.topk.index_width=smallest"}});
  cases.push_back({"topk", "bucket", false, "scaled_sign_packed12",
                   {"compressor.topk.value_type=scaled_sign", "compressor.topk.index_width=packed12"}});
  cases.push_back({"randomk", "tensor", true, "codebook", {"compressor.randomk.value_type=codebook"}});
  cases.push_back({"randomk", "global", false, "bf16", {"compressor.randomk.value_type=bf16"}});
  cases.push_back({"dct_topk", "tensor", true, "codebook_packed12",
                   {"compressor.dct_topk.value_type=codebook", "compressor.dct_topk.index_width=packed12"}});
  return cases;
}

Config config_for(const Case& c) {
  ConfigSchema schema;
  CompressorRegistry::global().add_config_keys(schema);
  std::vector<std::string> overrides = {
      "compressor.name=" + c.compressor, "compressor.granularity=" + c.granularity,
      "compressor.bucket_mb=0.001",  // about 260 floats: several buckets
      "compressor." + c.compressor + ".error_feedback=" + (c.error_feedback ? "true" : "false")};
  overrides.insert(overrides.end(), c.settings.begin(), c.settings.end());
  return Config::defaults(schema, overrides);
}

class EveryCompressor : public testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    if (const std::string reason = test_backend_unavailable(); !reason.empty()) GTEST_SKIP() << reason;
  }
};

TEST_P(EveryCompressor, MpiAggregateEqualsSingleProcessComputation) {
  const Case& c = GetParam();
  const Config config = config_for(c);
  const Granularity granularity = parse_granularity(c.granularity);
  try {
    CompressorRegistry::global().create(config);
  } catch (const ConfigError& unsupported) {
    GTEST_SKIP() << unsupported.what();  // e.g. PowerSGD needs each tensor's own shape
  }

  Communicator comm(MPI_COMM_WORLD, test::test_communicator_options());
  const int world = comm.size();
  const std::uint64_t seed = 1234;
  const std::uint64_t bucket_bytes = static_cast<std::uint64_t>(0.001 * 1024 * 1024);
  CompressedAllReduce distributed(comm, CompressorRegistry::global().create(config), kTensors, granularity,
                                  bucket_bytes, seed, test_execution());

  // The single-process twin: one compressor per simulated rank, driven unit by unit.
  std::vector<std::unique_ptr<Compressor>> twins;
  for (int w = 0; w < world; ++w) twins.push_back(CompressorRegistry::global().create(config));

  for (std::uint64_t step = 0; step < 4; ++step) {
    std::vector<std::vector<float>> grads, outs;
    for (std::size_t t = 0; t < kTensors.size(); ++t) {
      grads.push_back(gradient(comm.rank(), step, t, kTensors[t].numel()));
      outs.emplace_back(grads.back().size(), -1.0f);
    }
    std::vector<std::span<const float>> in(grads.begin(), grads.end());
    std::vector<std::span<float>> out(outs.begin(), outs.end());
    distributed.run(step, in, out);

    // Units as CompressedAllReduce forms them, from its own description of granularity.
    std::vector<std::vector<std::size_t>> units;
    if (granularity == Granularity::PerTensor) {
      for (std::size_t t = 0; t < kTensors.size(); ++t) units.push_back({t});
    } else if (granularity == Granularity::Global) {
      units.push_back({0, 1, 2, 3, 4});
    } else {
      std::vector<std::size_t> members;
      std::uint64_t bytes = 0;
      for (std::size_t t = 0; t < kTensors.size(); ++t) {
        const std::uint64_t size = kTensors[t].numel() * 4;
        if (!members.empty() && bytes + size > bucket_bytes) {
          units.push_back(members);
          members.clear();
          bytes = 0;
        }
        members.push_back(t);
        bytes += size;
      }
      units.push_back(members);
    }
    for (std::size_t u = 0; u < units.size(); ++u) {
      std::vector<std::int64_t> shape;
      std::string name;
      if (granularity == Granularity::PerTensor) {
        shape = kTensors[units[u][0]].shape;
        name = kTensors[units[u][0]].name;
      } else {
        std::int64_t n = 0;
        for (std::size_t t : units[u]) n += kTensors[t].numel();
        shape = {n};
        name = granularity == Granularity::Global ? "global" : "bucket" + std::to_string(u);
      }
      std::vector<std::vector<float>> inputs;
      for (int w = 0; w < world; ++w) {
        std::vector<float> fused;
        for (std::size_t t : units[u]) {
          const auto g = gradient(w, step, t, kTensors[t].numel());
          fused.insert(fused.end(), g.begin(), g.end());
        }
        inputs.push_back(std::move(fused));
      }
      const UnitContext unit{.step = step, .unit_id = static_cast<std::uint32_t>(granularity == Granularity::PerTensor ? units[u][0] : u),
                             .name = name, .shape = shape, .rank = 0, .world_size = world, .shared_seed = seed,
                             .execution = test_execution()};
      const auto expected = test::loopback_unit(twins, unit, inputs);
      // EXPECT, not ASSERT: a rank leaving the test early would strand the others in a collective.
      std::size_t offset = 0, mismatches = 0;
      for (std::size_t t : units[u]) {
        for (std::size_t i = 0; i < outs[t].size(); ++i) {
          const float want = expected[static_cast<std::size_t>(comm.rank())][offset + i];
          // MPI may sum the ranks in another order than the loopback: float rounding only.
          if (std::abs(outs[t][i] - want) > 1e-5f * (1.0f + std::abs(want)) && mismatches++ < 3) {
            ADD_FAILURE() << c.compressor << " step " << step << " tensor " << kTensors[t].name << " [" << i
                          << "]: " << outs[t][i] << " != " << want;
          }
        }
        offset += outs[t].size();
      }
      EXPECT_EQ(mismatches, 0u) << "unit " << name;
    }
  }
}

// start() + finish() (the first round's exchange in flight while the rank computes) is run():
// the same bytes, and the same aggregate; bitwise where nothing is summed or at two ranks, within
// float rounding otherwise (MPI's non-blocking all-reduce may add in another order).
TEST_P(EveryCompressor, StartAndFinishGiveWhatRunGives) {
  const Case& c = GetParam();
  const Config config = config_for(c);
  try {
    CompressorRegistry::global().create(config);
  } catch (const ConfigError& unsupported) {
    GTEST_SKIP() << unsupported.what();
  }
  Communicator comm(MPI_COMM_WORLD, test::test_communicator_options());
  const Granularity granularity = parse_granularity(c.granularity);
  auto make = [&] {
    return CompressedAllReduce(comm, CompressorRegistry::global().create(config), kTensors, granularity, 1 << 10, 99,
                               test_execution());
  };
  CompressedAllReduce blocking = make();
  CompressedAllReduce overlapped = make();
  const bool summed = CompressorRegistry::global().create(config)->aggregation() != Aggregation::Gathered;
  for (std::uint64_t step = 0; step < 3; ++step) {
    std::vector<std::vector<float>> grads, blocking_out, overlapped_out;
    for (std::size_t t = 0; t < kTensors.size(); ++t) {
      grads.push_back(gradient(comm.rank(), step, t, kTensors[t].numel()));
      blocking_out.emplace_back(grads.back().size(), -1.0f);
      overlapped_out.emplace_back(grads.back().size(), -2.0f);
    }
    const std::vector<std::span<const float>> in(grads.begin(), grads.end());
    const std::vector<std::span<float>> a(blocking_out.begin(), blocking_out.end());
    const std::vector<std::span<float>> b(overlapped_out.begin(), overlapped_out.end());
    const SyncReport ran = blocking.run(step, in, a);
    SyncReport finished = overlapped.start(step, in);
    EXPECT_TRUE(overlapped.in_flight());
    finished += overlapped.finish(b);
    EXPECT_FALSE(overlapped.in_flight());
    EXPECT_EQ(finished.comm.bytes_sent, ran.comm.bytes_sent) << "step " << step;
    EXPECT_EQ(finished.comm.bytes_received, ran.comm.bytes_received) << "step " << step;
    EXPECT_EQ(finished.comm.calls, ran.comm.calls) << "step " << step;
    EXPECT_EQ(finished.payload_bytes, ran.payload_bytes) << "step " << step;
    EXPECT_EQ(finished.rounds, ran.rounds) << "step " << step;
    for (std::size_t t = 0; t < kTensors.size(); ++t) {
      if (!summed || comm.size() <= 2) {
        EXPECT_EQ(overlapped_out[t], blocking_out[t]) << kTensors[t].name << " step " << step;
      } else {
        EXPECT_THAT(overlapped_out[t], testing::Pointwise(testing::FloatNear(1e-5f), blocking_out[t]))
            << kTensors[t].name << " step " << step;
      }
    }
  }
  std::vector<std::vector<float>> grads;
  for (std::size_t t = 0; t < kTensors.size(); ++t) grads.push_back(gradient(comm.rank(), 9, t, kTensors[t].numel()));
  const std::vector<std::span<const float>> in(grads.begin(), grads.end());
  overlapped.start(9, in);
  EXPECT_THROW(overlapped.start(10, in), Error) << "a second step while one is in flight";
  // Destroyed in flight: it waits for its collectives, on every rank alike.
}

// Half-precision dense all-reduce: half the bytes of fp32, and the mean within the rounding of
// a sum carried out in fp16 / bf16.
TEST(NoCompression, HalfPrecisionOnTheWire) {
  Communicator comm(MPI_COMM_WORLD, test::test_communicator_options());
  const std::vector<TensorInfo> tensors{{"w", {40, 25}}};
  for (const char* type : {"fp16", "bf16"}) {
    ConfigSchema schema;
    CompressorRegistry::global().add_config_keys(schema);
    const Config config = Config::defaults(schema, std::vector<std::string>{"compressor.none.value_type=" + std::string(type)});
    CompressedAllReduce sync(comm, CompressorRegistry::global().create(config), tensors, Granularity::PerTensor, 1, 0,
                             ExecutionContext{});
    std::vector<float> grad = gradient(comm.rank(), 0, 0, 1000), out(1000);
    const std::vector<std::span<const float>> in{grad};
    const std::vector<std::span<float>> outs{out};
    const SyncReport report = sync.run(0, in, outs);
    EXPECT_EQ(report.payload_bytes, 2000u) << type;
    const double tolerance = std::string(type) == "fp16" ? 2e-3 : 1.6e-2;  // a few ulps of the type
    std::vector<double> mean(out.size(), 0.0);
    for (int w = 0; w < comm.size(); ++w) {
      const std::vector<float> g = gradient(w, 0, 0, 1000);
      for (std::size_t i = 0; i < g.size(); ++i) mean[i] += g[i] / comm.size();
    }
    std::size_t mismatches = 0;
    for (std::size_t i = 0; i < out.size(); ++i) {
      if (std::abs(out[i] - mean[i]) > tolerance * (1.0 + std::abs(mean[i]))) ++mismatches;
    }
    EXPECT_EQ(mismatches, 0u) << type;
  }
}

// The execution context reaches the compressors' kernels: on the Reference backend top-k's
// aggregate equals the Cpu one bit for bit (selection and sums are exact), and a backend this
// build has no kernels for is refused by name, by every compressor that runs kernels (where the
// build lacks one: a build with both Kokkos and CUDA has every backend).
TEST(CompressedAllReduce, ComputesOnTheBackendOfItsExecutionContext) {
  Communicator comm(MPI_COMM_WORLD, test::test_communicator_options());
  auto run = [&](const std::string& name, kernels::Backend backend) {
    const Config config = config_for({name, "tensor", false});
    CompressedAllReduce sync(comm, CompressorRegistry::global().create(config), kTensors, Granularity::PerTensor,
                             1, 5, ExecutionContext{.backend = backend});
    std::vector<std::vector<float>> grads, outs;
    for (std::size_t t = 0; t < kTensors.size(); ++t) {
      grads.push_back(gradient(comm.rank(), 0, t, kTensors[t].numel()));
      outs.emplace_back(grads.back().size());
    }
    const std::vector<std::span<const float>> in(grads.begin(), grads.end());
    const std::vector<std::span<float>> out(outs.begin(), outs.end());
    sync.run(0, in, out);
    return outs;
  };
  EXPECT_EQ(run("topk", kernels::Backend::Reference), run("topk", kernels::Backend::Cpu));
  const auto& built = available_backends();
  for (const kernels::Backend absent : {kernels::Backend::Cuda, kernels::Backend::Kokkos}) {
    if (std::ranges::find(built, absent) != built.end()) continue;
    for (const std::string name : {"topk", "dct_topk", "powersgd", "quantize"}) {
      try {
        run(name, absent);
        ADD_FAILURE() << name << " ran on a backend without kernels";
      } catch (const Error& refused) {
        const std::string expected = "no " + std::string(kernels::to_string(absent)) + " implementation";
        EXPECT_THAT(refused.what(), testing::HasSubstr(expected)) << name;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Registered, EveryCompressor, testing::ValuesIn(all_cases()), [](const auto& info) {
  const Case& c = info.param;
  return c.compressor + (c.variant.empty() ? "" : "_" + c.variant) + "_" + c.granularity + (c.error_feedback ? "_ef" : "");
});

}  // namespace
}  // namespace lowcomm
