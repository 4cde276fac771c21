// Error feedback around a compressor that transmits only the first element of each unit: the
// rest must be carried into the next step, and a saved and restored wrapper must continue
// exactly as the original.
#include <gtest/gtest.h>

#include "loopback.hpp"
#include "lowcomm/compress/error_feedback.hpp"

namespace lowcomm {
namespace {

class FirstElementOnly final : public Compressor {
 public:
  Aggregation aggregation() const override { return Aggregation::Summable; }
  bool supports(Granularity) const override { return true; }
  Message encode(const UnitContext&, std::span<const float> g, UnitScratch&) override {
    last_input.assign(g.begin(), g.end());
    return Message::sum({g[0]});
  }
  std::optional<Message> decode(const UnitContext& unit, int, const Received& r, UnitScratch&,
                                std::span<float> out) override {
    std::fill(out.begin(), out.end(), 0.0f);
    out[0] = r.sum[0] / static_cast<float>(unit.world_size);
    return std::nullopt;
  }
  void transmitted(const UnitContext&, std::span<const float> input, const UnitScratch&,
                   std::span<float> out) const override {
    std::fill(out.begin(), out.end(), 0.0f);
    out[0] = input[0];
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
