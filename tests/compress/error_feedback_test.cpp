// Error feedback around a compressor that transmits only the first element of each unit: the
// rest must be carried into the next step, and a saved and restored wrapper must continue
// exactly as the original.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <limits>
#include <random>
#include <string>

#include "forwarding_compressor.hpp"
#include "loopback.hpp"
#include "lowcomm/compress/error_feedback.hpp"
#include "lowcomm/compress/registry.hpp"

namespace lowcomm {
namespace {

class FirstElementOnly final : public CompressorWith<NoScratch> {
 public:
  Aggregation aggregation() const override { return Aggregation::Summable; }
  bool supports(Granularity) const override { return true; }
  Message encode(const UnitContext&, std::span<const float> g, NoScratch&) override {
    last_input.assign(g.begin(), g.end());
    return Message::sum({g[0]});
  }
  std::optional<Message> decode(const UnitContext& unit, int, const Received& r, NoScratch&,
                                std::span<float> out) override {
    std::fill(out.begin(), out.end(), 0.0f);
    out[0] = r.sum[0] / static_cast<float>(unit.world_size);
    return std::nullopt;
  }
  Transmitted transmitted(const UnitContext&, std::span<const float> input, const NoScratch&,
                          std::span<float> out) const override {
    std::fill(out.begin(), out.end(), 0.0f);
    out[0] = input[0];
    return Transmitted::dense();
  }
  std::optional<std::uint64_t> wire_bytes(const UnitContext&, int) const override { return 4; }
  std::vector<float> last_input;
};

TEST(ErrorFeedback, CarriesWhatWasNotTransmittedIntoTheNextStep) {
  auto inner = std::make_unique<FirstElementOnly>();
  FirstElementOnly* spy = inner.get();
  std::vector<std::unique_ptr<Compressor>> ranks;
  ranks.push_back(std::make_unique<ErrorFeedback>(std::move(inner)));
  const std::vector<std::int64_t> shape{3};
  UnitContext unit{.step = 0, .unit_id = 5, .name = "w", .shape = shape};

  auto out = test::loopback_unit(ranks, unit, {{1.0f, 2.0f, 3.0f}});
  EXPECT_EQ(out[0], (std::vector<float>{1.0f, 0.0f, 0.0f}));
  const auto& ef = dynamic_cast<const ErrorFeedback&>(*ranks[0]);
  EXPECT_EQ(std::vector<float>(ef.residual(5).begin(), ef.residual(5).end()), (std::vector<float>{0.0f, 2.0f, 3.0f}));

  unit.step = 1;
  out = test::loopback_unit(ranks, unit, {{10.0f, 20.0f, 30.0f}});
  EXPECT_EQ(spy->last_input, (std::vector<float>{10.0f, 22.0f, 33.0f}));  // gradient + residual
  EXPECT_EQ(out[0][0], 10.0f);

  // Save, restore into a fresh wrapper, and both continue identically.
  StateDict state;
  ranks[0]->save_state(state, "compressor/");
  std::vector<std::unique_ptr<Compressor>> restored;
  restored.push_back(std::make_unique<ErrorFeedback>(std::make_unique<FirstElementOnly>()));
  restored[0]->load_state(state, "compressor/");
  unit.step = 2;
  const auto a = test::loopback_unit(ranks, unit, {{1.0f, 1.0f, 1.0f}});
  const auto b = test::loopback_unit(restored, unit, {{1.0f, 1.0f, 1.0f}});
  EXPECT_EQ(a, b);
  EXPECT_EQ(dynamic_cast<const ErrorFeedback&>(*restored[0]).residual(5)[1], 23.0f);
}

// compressor.<name>.error_feedback_decay = β reaches the wrapper: the next input is
// gradient + β·residual (SparseLoCo's accumulator e ← β·e + Δ; DeMo's momentum).
TEST(ErrorFeedback, TheConfiguredDecayFadesTheResidual) {
  ConfigSchema schema;
  CompressorRegistry::global().add_config_keys(schema);
  const Config config = Config::defaults(
      schema, std::vector<std::string>{"compressor.name=topk", "compressor.topk.k=1",
                                       "compressor.topk.error_feedback_decay=0.5"});
  std::vector<std::unique_ptr<Compressor>> ranks;
  ranks.push_back(CompressorRegistry::global().create(config));
  const std::vector<std::int64_t> shape{3};
  UnitContext unit{.step = 0, .unit_id = 2, .name = "w", .shape = shape};
  (void)test::loopback_unit(ranks, unit, {{4.0f, 2.0f, 1.0f}});  // sends 4; residual (0, 2, 1)
  const auto& ef = dynamic_cast<const ErrorFeedback&>(*ranks[0]);
  EXPECT_EQ(std::vector<float>(ef.residual(2).begin(), ef.residual(2).end()), (std::vector<float>{0.0f, 2.0f, 1.0f}));
  unit.step = 1;
  const auto out = test::loopback_unit(ranks, unit, {{0.0f, 0.0f, 3.0f}});  // input (0, 1, 3.5): sends 3.5
  EXPECT_EQ(out[0], (std::vector<float>{0.0f, 0.0f, 3.5f}));
  EXPECT_EQ(std::vector<float>(ef.residual(2).begin(), ef.residual(2).end()), (std::vector<float>{0.0f, 1.0f, 0.0f}));
}

// Forwards everything to the wrapped compressor, but writes its transmitted entries out in full,
// so that error feedback takes its dense path.
class DenseTransmitted final : public ForwardingCompressor {
 public:
  using ForwardingCompressor::ForwardingCompressor;
  Transmitted transmitted(const UnitContext& unit, std::span<const float> input, const UnitScratch& scratch,
                          std::span<float> out) const override {
    const Transmitted sent = ForwardingCompressor::transmitted(unit, input, scratch, out);
    EXPECT_EQ(sent.form(), Transmitted::Form::Entries);
    sent.write_dense(unit.execution.backend, {}, out);
    return Transmitted::dense();
  }
};

std::unique_ptr<Compressor> without_error_feedback(const std::string& name) {
  ConfigSchema schema;
  CompressorRegistry::global().add_config_keys(schema);
  const std::vector<std::string> overrides = {"compressor.name=" + name,
                                              "compressor." + name + ".error_feedback=false",
                                              "compressor." + name + ".ratio=0.2"};
  return CompressorRegistry::global().create(Config::defaults(schema, overrides));
}

// The sparse path (entries: the buffers swap and only the sent entries are written)
// against the dense one (transmitted, then a subtraction), bitwise, over several steps of 3
// ranks, with signed zeros, ties, a NaN and an infinity among the values.
TEST(ErrorFeedback, SparseEntriesGiveTheDenseResidualBitwise) {
  for (const std::string name : {"topk", "randomk"}) {
    std::vector<std::unique_ptr<Compressor>> sparse, dense;
    for (int w = 0; w < 3; ++w) {
      sparse.push_back(std::make_unique<ErrorFeedback>(without_error_feedback(name), 0.9f));
      dense.push_back(std::make_unique<ErrorFeedback>(
          std::make_unique<DenseTransmitted>(without_error_feedback(name)), 0.9f));
    }
    const std::vector<std::int64_t> shape{7, 13};
    std::mt19937 random(7);
    std::normal_distribution<float> normal;
    for (std::uint64_t step = 0; step < 5; ++step) {
      UnitContext unit{.step = step, .unit_id = 3, .name = "w", .shape = shape};
      std::vector<std::vector<float>> inputs(3, std::vector<float>(91));
      for (auto& input : inputs) {
        for (float& x : input) x = normal(random);
        input[0] = -0.0f;
        input[1] = 0.0f;
        input[2] = input[3];
      }
      if (step == 3) {
        inputs[1][5] = std::numeric_limits<float>::quiet_NaN();
        inputs[2][6] = -std::numeric_limits<float>::infinity();
      }
      const auto a = test::loopback_unit(sparse, unit, inputs);
      const auto b = test::loopback_unit(dense, unit, inputs);
      for (int w = 0; w < 3; ++w) {
        SCOPED_TRACE(::testing::Message() << name << " step " << step << " rank " << w);
        const auto ra = dynamic_cast<const ErrorFeedback&>(*sparse[w]).residual(3);
        const auto rb = dynamic_cast<const ErrorFeedback&>(*dense[w]).residual(3);
        ASSERT_EQ(ra.size(), rb.size());
        for (std::size_t i = 0; i < ra.size(); ++i) {
          ASSERT_EQ(std::bit_cast<std::uint32_t>(ra[i]), std::bit_cast<std::uint32_t>(rb[i])) << "element " << i;
        }
        for (std::size_t i = 0; i < a[w].size(); ++i) {
          ASSERT_EQ(std::bit_cast<std::uint32_t>(a[w][i]), std::bit_cast<std::uint32_t>(b[w][i])) << "aggregate " << i;
        }
      }
    }
  }
}

TEST(ErrorFeedback, RejectsAUnitThatChangesSize) {
  ErrorFeedback ef(std::make_unique<FirstElementOnly>());
  const std::vector<std::int64_t> three{3}, four{4};
  const std::vector<float> g3(3, 1.0f), g4(4, 1.0f);
  UnitScratch scratch;
  ef.encode({.unit_id = 1, .name = "w", .shape = three}, g3, scratch);
  EXPECT_THROW(ef.encode({.unit_id = 1, .name = "w", .shape = four}, g4, scratch), Error);
}

}  // namespace
}  // namespace lowcomm
