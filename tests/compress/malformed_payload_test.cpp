// Every compressor's decoder against payloads that did not come from it: truncated, extended,
// bytes flipped, random garbage, sums of the wrong length. Each must either decode or throw
// lowcomm::Error; never read or write out of bounds (`bash scripts/test.sh debug` runs this under
// AddressSanitizer, which turns any such access into a failure). A short randomised run, seeded,
// so that a failure reproduces.
#include <gtest/gtest.h>

#include <random>

#include "lowcomm/compress/registry.hpp"
#include "lowcomm/error.hpp"

namespace lowcomm {
namespace {

constexpr int kMutationsPerCase = 300;

struct Fixture {
  std::vector<std::int64_t> shape;
};

std::unique_ptr<Compressor> make(const std::string& name) {
  ConfigSchema schema;
  CompressorRegistry::global().add_config_keys(schema);
  const std::vector<std::string> overrides{"compressor.name=" + name,
                                           "compressor." + name + ".error_feedback=false"};
  return CompressorRegistry::global().create(Config::defaults(schema, overrides));
}

// Applies one random mutation to a valid payload.
std::vector<std::byte> mutate(std::vector<std::byte> bytes, std::mt19937& random) {
  std::uniform_int_distribution<int> kind(0, 4);
  switch (kind(random)) {
    case 0:  // truncate
      bytes.resize(bytes.empty() ? 0 : std::uniform_int_distribution<std::size_t>(0, bytes.size() - 1)(random));
      break;
    case 1:  // extend
      bytes.resize(bytes.size() + std::uniform_int_distribution<std::size_t>(1, 64)(random), std::byte{0xAB});
      break;
    case 2:  // flip a few bytes (indices out of range, NaN scales, bad padding bits...)
      for (int i = 0; i < 4 && !bytes.empty(); ++i) {
        bytes[std::uniform_int_distribution<std::size_t>(0, bytes.size() - 1)(random)] =
            static_cast<std::byte>(std::uniform_int_distribution<int>(0, 255)(random));
      }
      break;
    case 3:  // all 0xFF: every index at its maximum
      std::fill(bytes.begin(), bytes.end(), std::byte{0xFF});
      break;
    default:  // garbage of a random length
      bytes.resize(std::uniform_int_distribution<std::size_t>(0, 2 * bytes.size() + 8)(random));
      for (std::byte& b : bytes) b = static_cast<std::byte>(std::uniform_int_distribution<int>(0, 255)(random));
  }
  return bytes;
}

class EveryDecoder : public testing::TestWithParam<std::string> {};

TEST_P(EveryDecoder, SurvivesMalformedPayloads) {
  const std::vector<Fixture> shapes{{{12, 10}}, {{37}}, {{3, 4, 5}}, {{1}}};
  std::mt19937 random(20261130);
  std::normal_distribution<float> normal;
  int decoded = 0, rejected = 0;
  for (const Fixture& fixture : shapes) {
    for (int world : {1, 3}) {
      auto compressor = make(GetParam());
      const UnitContext unit{.step = 0, .unit_id = 0, .name = "w", .shape = fixture.shape, .rank = 0,
                             .world_size = world, .shared_seed = 7};
      std::vector<float> gradient(static_cast<std::size_t>(unit.numel()));
      for (float& x : gradient) x = normal(random);
      std::vector<float> aggregate(gradient.size());
      for (int m = 0; m < kMutationsPerCase; ++m) {
        // A fresh valid round 0 each time (decoders may keep per-step scratch).
        UnitScratch scratch;
        const Message message = compressor->encode(unit, gradient, scratch);
        Received received;
        std::vector<std::vector<std::byte>> payloads;
        std::vector<float> sum;
        if (message.exchange == Exchange::GatherBytes) {
          for (int w = 0; w < world; ++w) payloads.push_back(w == m % world ? mutate(message.bytes, random) : message.bytes);
          for (const auto& p : payloads) received.gathered.emplace_back(p);
        } else {
          sum.assign(message.sum_values().begin(), message.sum_values().end());
          sum.resize(std::uniform_int_distribution<std::size_t>(0, sum.size() + 3)(random));
          received.sum = sum;
        }
        try {
          compressor->decode(unit, 0, received, scratch, aggregate);
          ++decoded;
        } catch (const Error&) {
          ++rejected;
        }
        // Multi-round compressors: a valid round 0, then a malformed round 1.
        if (compressor->aggregation() != Aggregation::MultiRound || message.exchange != Exchange::Sum) continue;
        compressor->encode(unit, gradient, scratch);
        std::vector<float> valid(message.sum_values().begin(), message.sum_values().end());
        const auto next = compressor->decode(unit, 0, Received{.sum = valid}, scratch, aggregate);
        if (!next) continue;
        std::vector<float> wrong(next->sum_values().begin(), next->sum_values().end());
        wrong.resize(std::uniform_int_distribution<std::size_t>(0, wrong.size() + 3)(random));
        try {
          compressor->decode(unit, 1, Received{.sum = wrong}, scratch, aggregate);
          ++decoded;
        } catch (const Error&) {
          ++rejected;
        }
      }
    }
  }
  EXPECT_GT(rejected, 0) << "no mutation was ever detected";
  RecordProperty("decoded", decoded);
}

// With rank 1 of 3 absent, `received.gathered` holds ranks 0 and 2: a bad payload in position 1
// came from rank 2, and the error must say so (a decoder that names the position says rank 1).
TEST(MalformedPayload, ErrorNamesTheSenderWhenARankIsAbsent) {
  for (const std::string name : {"dct_topk", "topk", "quantize"}) {
    SCOPED_TRACE(name);
    auto compressor = make(name);
    const std::vector<std::int64_t> shape{12, 10};
    const UnitContext unit{.step = 0, .unit_id = 0, .name = "w", .shape = shape, .rank = 0, .world_size = 3,
                           .participants = 2, .shared_seed = 7};
    std::vector<float> gradient(120);
    for (std::size_t i = 0; i < gradient.size(); ++i) gradient[i] = static_cast<float>(i % 7) - 3.0f;
    std::vector<float> aggregate(gradient.size());
    UnitScratch scratch;
    const Message message = compressor->encode(unit, gradient, scratch);
    ASSERT_EQ(message.exchange, Exchange::GatherBytes);
    const std::vector<std::byte> truncated(message.bytes.begin(), message.bytes.end() - 1);
    const Received received{.gathered = {message.bytes, truncated}, .senders = {0, 2}};
    try {
      compressor->decode(unit, 0, received, scratch, aggregate);
      ADD_FAILURE() << "a truncated payload was decoded";
    } catch (const Error& error) {
      EXPECT_NE(std::string(error.what()).find("rank 2 sent"), std::string::npos) << error.what();
    }
  }
}

std::vector<std::string> compressor_names() {
  std::vector<std::string> names;
  for (const CompressorInfo* info : CompressorRegistry::global().all()) names.push_back(info->name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(Registered, EveryDecoder, testing::ValuesIn(compressor_names()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace lowcomm
