// A gathered compressor's aggregate is the mean over the ranks of what each one sent: checked
// against each rank's own `transmitted` (what it sent, decoded), summed in rank order into zeros
// and divided by W, bitwise, at 1, 2 and 3 ranks. (The MPI tests compare the exchange itself with
// the single-process loopback; this pins the arithmetic of the mean.)
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "loopback.hpp"
#include "lowcomm/compress/registry.hpp"

namespace lowcomm {
namespace {

std::unique_ptr<Compressor> create(const std::vector<std::string>& overrides) {
  ConfigSchema schema;
  CompressorRegistry::global().add_config_keys(schema);
  return CompressorRegistry::global().create(Config::defaults(schema, overrides));
}

TEST(GatheredMean, QuantizeAggregateIsTheRankOrderedMeanOfWhatEachSent) {
  for (const std::string bits : {"1", "4", "8"}) {
    for (int world : {1, 2, 3}) {
      SCOPED_TRACE(::testing::Message() << bits << " bits, " << world << " ranks");
      const std::vector<std::string> overrides = {"compressor.name=quantize", "compressor.quantize.bits=" + bits,
                                                  "compressor.quantize.error_feedback=false"};
      std::vector<std::unique_ptr<Compressor>> ranks;
      for (int w = 0; w < world; ++w) ranks.push_back(create(overrides));
      const std::vector<std::int64_t> shape{5, 37};
      const UnitContext unit{.step = 0, .unit_id = 1, .name = "w", .shape = shape, .world_size = world};
      std::mt19937 random(static_cast<unsigned>(world));
      std::normal_distribution<float> normal;
      std::vector<std::vector<float>> inputs(static_cast<std::size_t>(world), std::vector<float>(185));
      for (auto& input : inputs) {
        for (float& x : input) x = normal(random);
        input[3] = -0.0f;
        std::fill(input.begin() + 37, input.begin() + 74, -0.0f);  // an all-zero row: scale 0
      }
      std::vector<UnitScratch> scratch;
      const auto aggregates = test::loopback_unit(ranks, unit, inputs, scratch);
      std::vector<float> want(185, 0.0f), sent(185);
      for (int w = 0; w < world; ++w) {
        UnitContext own = unit;
        own.rank = w;
        ranks[static_cast<std::size_t>(w)]->transmitted(own, inputs[static_cast<std::size_t>(w)],
                                                        scratch[static_cast<std::size_t>(w)], sent);
        for (std::size_t i = 0; i < want.size(); ++i) want[i] += sent[i];
      }
      for (float& x : want) x /= static_cast<float>(world);
      for (int w = 0; w < world; ++w) {
        for (std::size_t i = 0; i < want.size(); ++i) {
          ASSERT_EQ(std::bit_cast<std::uint32_t>(aggregates[static_cast<std::size_t>(w)][i]),
                    std::bit_cast<std::uint32_t>(want[i]))
              << "rank " << w << " element " << i;
        }
      }
    }
  }
}

}  // namespace
}  // namespace lowcomm
