// PowerSGD's options from PyTorch's DDP hook: dense steps before start_step, dense matrices
// that would not compress by min_compression_rate, an orthonormal starting Q.
#include <gtest/gtest.h>

#include <cmath>

#include "loopback.hpp"
#include "lowcomm/compress/registry.hpp"

namespace lowcomm {
namespace {

std::unique_ptr<Compressor> powersgd(std::vector<std::string> overrides) {
  ConfigSchema schema;
  CompressorRegistry::global().add_config_keys(schema);
  overrides.push_back("compressor.name=powersgd");
  overrides.push_back("compressor.powersgd.error_feedback=false");
  return CompressorRegistry::global().create(Config::defaults(schema, overrides));
}

TEST(PowerSgdOptions, DenseBeforeStartStep) {
  auto compressor = powersgd({"compressor.powersgd.start_step=2", "compressor.powersgd.rank=1"});
  const std::vector<std::int64_t> shape{6, 5};
  for (std::uint64_t step = 0; step < 3; ++step) {
    const UnitContext unit{.step = step, .unit_id = 0, .name = "w", .shape = shape, .world_size = 1};
    EXPECT_EQ(*compressor->wire_bytes(unit, 0), step < 2 ? 30u * 4 : 6u * 4) << step;
    std::vector<float> g(30);
    for (std::size_t i = 0; i < g.size(); ++i) g[i] = static_cast<float>(i % 7) - 3.0f;
    std::vector<std::unique_ptr<Compressor>> ranks;
    ranks.push_back(std::move(compressor));
    const auto out = test::loopback_unit(ranks, unit, {g});
    compressor = std::move(ranks[0]);
    if (step < 2) EXPECT_EQ(out[0], g) << "a dense step is the exact mean";
  }
}

TEST(PowerSgdOptions, MatricesThatWouldNotShrinkGoDense) {
  const std::vector<std::int64_t> square{4, 4};
  const UnitContext unit{.step = 0, .unit_id = 0, .name = "w", .shape = square, .world_size = 1};
  // rank 2: (4 + 4) · 2 = 16 floats against 16: compressing saves nothing.
  EXPECT_EQ(*powersgd({"compressor.powersgd.min_compression_rate=2"})->wire_bytes(unit, 0), 16u * 4);
  EXPECT_EQ(*powersgd({})->wire_bytes(unit, 0), 4u * 2 * 4) << "the paper compresses regardless";
}

// With M = I, round 0's message P = M·Q is the Q about to be used: at step 0 the random start,
// at step 1 the warm-started one. With orthogonalize_q both must be orthonormal.
TEST(PowerSgdOptions, OrthogonalizedQBeforeEveryUse) {
  const std::vector<std::int64_t> shape{8, 8};
  std::vector<float> identity(64, 0.0f);
  for (int i = 0; i < 8; ++i) identity[i * 8 + i] = 1.0f;
  auto deviation = [](const std::vector<float>& q) {  // from orthonormal columns, 8 × 3
    double worst = 0.0;
    for (int a = 0; a < 3; ++a) {
      for (int b = 0; b < 3; ++b) {
        double dot = 0.0;
        for (int row = 0; row < 8; ++row) dot += double(q[row * 3 + a]) * q[row * 3 + b];
        worst = std::max(worst, std::abs(dot - (a == b ? 1.0 : 0.0)));
      }
    }
    return worst;
  };
  for (bool orthogonalize : {false, true}) {
    std::vector<std::unique_ptr<Compressor>> ranks;
    ranks.push_back(powersgd({"compressor.powersgd.rank=3",
                              std::string("compressor.powersgd.orthogonalize_q=") + (orthogonalize ? "true" : "false")}));
    for (std::uint64_t step = 0; step < 2; ++step) {
      const UnitContext unit{.step = step, .unit_id = 3, .name = "w", .shape = shape, .world_size = 1,
                             .shared_seed = 11};
      std::vector<float> m = identity;
      for (float& x : m) x *= 3.0f;  // so the kept Q (= Mᵀ P̂) is not orthonormal by itself
      UnitScratch scratch;
      const Message p = ranks[0]->encode(unit, m, scratch);
      std::vector<float> q = p.values;
      for (float& x : q) x /= 3.0f;
      if (orthogonalize) {
        EXPECT_LT(deviation(q), 1e-5) << "step " << step;
      } else if (step == 0) {
        EXPECT_GT(deviation(q), 1e-2) << "a raw normal draw is not orthonormal";
      }
      // Finish the step (one rank: the sums are the messages) so that Q is kept for the next.
      std::vector<float> out(64);
      const auto second = ranks[0]->decode(unit, 0, Received{.sum = p.sum_values()}, scratch, out);
      ASSERT_TRUE(second.has_value());
      EXPECT_FALSE(ranks[0]->decode(unit, 1, Received{.sum = second->sum_values()}, scratch, out).has_value());
    }
  }
}

}  // namespace
}  // namespace lowcomm
