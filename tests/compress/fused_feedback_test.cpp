// Error feedback fused into the compressor gives the bits of the unfused error feedback: the same
// aggregates and residuals, step after step, on 1 to 3 simulated ranks, with decay, a step this rank
// is absent from, and a checkpoint saved and restored in the middle. PowerSGD defers the residual
// into its first product (fused_error_feedback.hpp; with orthogonalize_q too); top-k forms the
// correction in its selection's first pass, quantize in its scales' pass (fused_correction.hpp;
// with a bf16 wire, stochastic rounding, 1 bit and groups across rows too).
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "forwarding_compressor.hpp"
#include "loopback.hpp"
#include "lowcomm/compress/error_feedback.hpp"
#include "lowcomm/compress/registry.hpp"

namespace lowcomm {
namespace {

// A compressor as the registry builds it, without its own error feedback: `options` begin with
// compressor.name=NAME.
std::unique_ptr<Compressor> bare(const std::vector<std::string>& options) {
  ConfigSchema schema;
  CompressorRegistry::global().add_config_keys(schema);
  const std::string name = options.at(0).substr(options.at(0).find('=') + 1);
  std::vector<std::string> overrides = options;
  overrides.push_back("compressor." + name + ".error_feedback=false");
  return CompressorRegistry::global().create(Config::defaults(schema, overrides));
}

// The fused form, as the registry builds it, and the unfused one: a forwarding wrapper in between
// hides the fused interfaces (Compressor::fused_error_feedback's and fused_correction's defaults).
std::unique_ptr<Compressor> with_feedback(bool fused, float decay, const std::vector<std::string>& options) {
  std::unique_ptr<Compressor> inner = bare(options);
  if (!fused) inner = std::make_unique<ForwardingCompressor>(std::move(inner));
  return std::make_unique<ErrorFeedback>(std::move(inner), decay);
}

void expect_same_bits(std::span<const float> a, std::span<const float> b, const char* what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (std::size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(std::bit_cast<std::uint32_t>(a[i]), std::bit_cast<std::uint32_t>(b[i])) << what << " " << i;
  }
}

struct Ranks {
  std::vector<std::unique_ptr<Compressor>> compressors;
  std::vector<UnitScratch> scratch;
  const ErrorFeedback& feedback(int w) const { return dynamic_cast<const ErrorFeedback&>(*compressors[w]); }
};

Ranks make_ranks(int world, bool fused, float decay, const std::vector<std::string>& options) {
  Ranks ranks;
  for (int w = 0; w < world; ++w) ranks.compressors.push_back(with_feedback(fused, decay, options));
  return ranks;
}

// Each rank's state saved and loaded into fresh instances (and fresh scratch), as a resumed run.
Ranks resumed(const Ranks& from, bool fused, float decay, const std::vector<std::string>& options) {
  Ranks to = make_ranks(static_cast<int>(from.compressors.size()), fused, decay, options);
  for (std::size_t w = 0; w < from.compressors.size(); ++w) {
    StateDict state;
    from.compressors[w]->save_state(state, "c/");
    to.compressors[w]->load_state(state, "c/");
  }
  return to;
}

TEST(FusedFeedback, GivesTheUnfusedBitsStepAfterStep) {
  struct Variant {
    kernels::Backend backend;
    float decay;
    std::vector<std::string> options;
  };
  const Variant variants[] = {
      {kernels::Backend::Cpu, 1.0f, {"compressor.name=powersgd"}},
      {kernels::Backend::Cpu, 0.9f,
       {"compressor.name=powersgd", "compressor.powersgd.rank=3", "compressor.powersgd.orthogonalize_q=true"}},
      {kernels::Backend::Reference, 0.9f, {"compressor.name=powersgd", "compressor.powersgd.rank=1"}},
      {kernels::Backend::Cpu, 1.0f, {"compressor.name=topk", "compressor.topk.ratio=0.05"}},
      {kernels::Backend::Cpu, 0.9f,
       {"compressor.name=topk", "compressor.topk.k=40", "compressor.topk.value_type=bf16"}},
      {kernels::Backend::Reference, 0.9f, {"compressor.name=topk", "compressor.topk.ratio=0.01"}},
      {kernels::Backend::Cpu, 1.0f, {"compressor.name=quantize", "compressor.quantize.bits=4"}},
      {kernels::Backend::Cpu, 0.9f,
       {"compressor.name=quantize", "compressor.quantize.bits=3", "compressor.quantize.rounding=stochastic",
        "compressor.quantize.group_size=5"}},
      {kernels::Backend::Cpu, 0.9f, {"compressor.name=quantize", "compressor.quantize.bits=1"}},
      {kernels::Backend::Reference, 0.9f, {"compressor.name=quantize", "compressor.quantize.bits=8"}},
  };
  const std::vector<std::int64_t> shape{19, 37};
  const std::size_t numel = 19 * 37;
  for (const Variant& v : variants) {
    for (const int world : {1, 2, 3}) {
      Ranks fused = make_ranks(world, true, v.decay, v.options);
      Ranks unfused = make_ranks(world, false, v.decay, v.options);
      std::mt19937 random(world);
      std::normal_distribution<float> normal;
      for (std::uint64_t step = 0; step < 7; ++step) {
        SCOPED_TRACE(::testing::Message() << v.options[0] << " on " << kernels::to_string(v.backend) << " decay "
                                          << v.decay << ", " << world << " ranks, step " << step);
        if (step == 4) {  // a checkpoint: the fused one's deferred residuals are saved subtracted
          fused = resumed(fused, true, v.decay, v.options);
          unfused = resumed(unfused, false, v.decay, v.options);
        }
        UnitContext unit{.step = step, .unit_id = 2, .name = "w", .shape = shape, .shared_seed = 5};
        unit.execution.backend = v.backend;
        unit.present = step != 2;  // absent: the whole corrected input stays as the residual
        std::vector<std::vector<float>> inputs(world, std::vector<float>(numel));
        for (auto& input : inputs) {
          for (float& x : input) x = normal(random);
        }
        const auto a = test::loopback_unit(fused.compressors, unit, inputs, fused.scratch);
        const auto b = test::loopback_unit(unfused.compressors, unit, inputs, unfused.scratch);
        for (int w = 0; w < world; ++w) {
          expect_same_bits(a[w], b[w], "aggregate");
          expect_same_bits(fused.feedback(w).residual(2), unfused.feedback(w).residual(2), "residual");
        }
      }
    }
  }
}

// The fused forms are in use (else the test above compares the unfused path with itself). Top-k
// and quantize offer their correction where the backend has the kernel.
TEST(FusedFeedback, TopkAndQuantizeFormTheCorrectionWhereTheBackendCan) {
  for (const char* name : {"compressor.name=topk", "compressor.name=quantize"}) {
    SCOPED_TRACE(name);
    std::unique_ptr<Compressor> compressor = bare({name});
    FusedCorrection* correcting = compressor->fused_correction();
    ASSERT_NE(correcting, nullptr);
    const std::vector<std::int64_t> shape{8, 6};
    UnitContext unit{.unit_id = 1, .name = "w", .shape = shape};
    for (const kernels::Backend backend : {kernels::Backend::Reference, kernels::Backend::Cpu}) {
      unit.execution.backend = backend;
      EXPECT_TRUE(correcting->corrects(unit)) << kernels::to_string(backend);
    }
    unit.execution.backend = kernels::Backend::Kokkos;
    EXPECT_FALSE(correcting->corrects(unit));
    EXPECT_EQ(ForwardingCompressor(std::move(compressor)).fused_correction(), nullptr);
  }
}

// PowerSGD: between a step's encode and its last decode, the deferred residual is being replaced
// and cannot be read.
TEST(FusedFeedback, PowerSgdDefersTheResidualToTheNextEncode) {
  const std::vector<std::int64_t> shape{8, 6};
  const std::vector<float> gradient(48, 0.5f);
  for (const bool fused : {true, false}) {
    std::vector<std::unique_ptr<Compressor>> rank;
    rank.push_back(with_feedback(fused, 1.0f, {"compressor.name=powersgd"}));
    std::vector<UnitScratch> scratch;
    test::loopback_unit(rank, {.step = 0, .unit_id = 1, .name = "w", .shape = shape}, {gradient}, scratch);
    const auto& feedback = dynamic_cast<const ErrorFeedback&>(*rank[0]);
    EXPECT_NO_THROW(feedback.residual(1));  // between steps: readable (subtracted, when deferred)
    rank[0]->encode({.step = 1, .unit_id = 1, .name = "w", .shape = shape}, gradient, scratch[0]);
    if (fused) {
      EXPECT_THROW(feedback.residual(1), Error);
    } else {
      EXPECT_NO_THROW(feedback.residual(1));
    }
  }
}

}  // namespace
}  // namespace lowcomm
