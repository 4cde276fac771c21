// The shared wire encodings (value_encoding.hpp, index_encoding.hpp): every encoding's bytes by
// hand and what it decodes to, and each sparse compressor (topk, randomk, dct_topk) sending with
// them: its wire bytes by hand, its aggregate over simulated ranks, the wire's own choices
// reproduced bit for bit by the explicit keys, and the errors a user meets.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "loopback.hpp"
#include "lowcomm/compress/codebook.hpp"
#include "lowcomm/compress/index_encoding.hpp"
#include "lowcomm/compress/registry.hpp"
#include "lowcomm/compress/value_encoding.hpp"
#include "lowcomm/error.hpp"
#include "lowcomm/kernels/topk.hpp"

namespace lowcomm {
namespace {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;
constexpr kernels::Backend kCpu = kernels::Backend::Cpu;

std::vector<float> normal_values(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  return v;
}

std::vector<float> round_trip(const ValueEncoding& encoding, std::span<const float> values) {
  std::vector<std::byte> bytes(encoding.bytes(values.size()));
  encoding.encode(kCpu, values, bytes);
  std::vector<float> back(values.size());
  encoding.decode(kCpu, bytes, back);
  return back;
}

std::unique_ptr<Compressor> make(const std::vector<std::string>& settings) {
  ConfigSchema schema;
  CompressorRegistry::global().add_config_keys(schema);
  return CompressorRegistry::global().create(Config::defaults(schema, settings));
}

std::vector<std::unique_ptr<Compressor>> ranks_of(int world, const std::vector<std::string>& settings) {
  std::vector<std::unique_ptr<Compressor>> ranks;
  for (int w = 0; w < world; ++w) ranks.push_back(make(settings));
  return ranks;
}

TEST(ValueEncoding, BytesAreCountedByHand) {
  const std::size_t k = 10;
  EXPECT_EQ(ValueEncoding::parse("fp32").bytes(k), 40u);
  EXPECT_EQ(ValueEncoding::parse("fp16").bytes(k), 20u);
  EXPECT_EQ(ValueEncoding::parse("bf16").bytes(k), 20u);
  EXPECT_EQ(ValueEncoding::parse("codebook", 4).bytes(k), 3u + 4u * 5u);   // 20 bits of codes, shift + 4 means
  EXPECT_EQ(ValueEncoding::parse("codebook", 16).bytes(k), 5u + 4u * 17u);  // 4 bits a code
  EXPECT_EQ(ValueEncoding::parse("sign").bytes(k), 2u);
  EXPECT_EQ(ValueEncoding::parse("scaled_sign").bytes(k), 2u + 4u);
}

TEST(ValueEncoding, DecodesToWhatEachPromises) {
  const std::vector<float> values = normal_values(37, 5);
  EXPECT_EQ(round_trip(ValueEncoding::parse("fp32"), values), values);
  double magnitude = 0;
  for (const float v : values) magnitude += std::fabs(double{v});
  const auto mean = static_cast<float>(magnitude / 37.0);
  const std::vector<float> sign = round_trip(ValueEncoding::parse("sign"), values);
  const std::vector<float> scaled = round_trip(ValueEncoding::parse("scaled_sign"), values);
  const ValueEncoding codebook = ValueEncoding::parse("codebook", 4, 6.0);
  const std::vector<float> coded = round_trip(codebook, values);
  const Codebook book = make_codebook(values, 4, 6.0);
  for (std::size_t i = 0; i < values.size(); ++i) {
    EXPECT_EQ(sign[i], std::signbit(values[i]) ? -1.0f : 1.0f) << i;
    EXPECT_EQ(scaled[i], std::signbit(values[i]) ? -mean : mean) << i;
    EXPECT_EQ(coded[i], book.decoded(book.codes[i])) << i;
  }
  for (const char* half : {"fp16", "bf16"}) {
    const std::vector<float> rounded = round_trip(ValueEncoding::parse(half), values);
    for (std::size_t i = 0; i < values.size(); ++i) EXPECT_NEAR(rounded[i], values[i], 1e-2 * std::fabs(values[i]));
  }
}

TEST(ValueEncoding, RefusesWhatItCannotSendOrRead) {
  EXPECT_THAT([] { ValueEncoding::parse("fp8"); }, ThrowsMessage<ConfigError>(HasSubstr("is not one of fp32, fp16")));
  EXPECT_THAT([] { ValueEncoding::parse("codebook", 1); }, ThrowsMessage<ConfigError>(HasSubstr("bins from 2 to 256")));
  std::vector<float> nan{1.0f, std::nanf("")};
  std::vector<std::byte> bytes(5);
  EXPECT_THAT([&] { ValueEncoding::parse("scaled_sign").encode(kCpu, nan, bytes); },
              ThrowsMessage<Error>(HasSubstr("value 1 is NaN")));
  // Three bins take 2 bits a code, so a received code of 3 is past them.
  const ValueEncoding three = ValueEncoding::parse("codebook", 3);
  std::vector<std::byte> payload(three.bytes(4), std::byte{0});
  payload[0] = std::byte{0xC0};  // the fourth code is 3
  std::vector<float> out(4);
  EXPECT_THAT([&] { three.decode(kCpu, payload, out); }, ThrowsMessage<Error>(HasSubstr("code 3 at position 3")));
  EXPECT_THAT([&] { three.decode(kCpu, std::span(payload).first(5), out); },
              ThrowsMessage<Error>(HasSubstr("malformed payload")));
}

TEST(IndexEncoding, BytesAreCountedByHandAndLimitsChecked) {
  const std::size_t k = 7;
  EXPECT_EQ(IndexEncoding::parse("int64").bytes(k, 100), 56u);
  EXPECT_EQ(IndexEncoding::parse("int32").bytes(k, 100), 28u);
  EXPECT_EQ(IndexEncoding::parse("smallest").bytes(k, 256), 7u);
  EXPECT_EQ(IndexEncoding::parse("smallest").bytes(k, 257), 14u);
  EXPECT_EQ(IndexEncoding::parse("smallest").bytes(k, 70000), 28u);
  EXPECT_EQ(IndexEncoding::parse("packed12").bytes(k, 4096), 12u);
  EXPECT_THAT([] { IndexEncoding::parse("packed12").bytes(2, 4097); },
              ThrowsMessage<Error>(HasSubstr("4097 entries are addressed: set index_width = smallest")));
  EXPECT_THAT([] { IndexEncoding::parse("int32").bytes(2, std::uint64_t{1} << 33); },
              ThrowsMessage<Error>(HasSubstr("set index_width = smallest or int64")));
  EXPECT_THAT([] { IndexEncoding::parse("int16"); }, ThrowsMessage<ConfigError>(HasSubstr("is not one of int64")));
  for (const std::string& name : IndexEncoding::names()) {
    const IndexEncoding encoding = IndexEncoding::parse(name);
    const std::vector<std::int64_t> indices{0, 4095, 17, 2048, 3};
    std::vector<std::byte> bytes(encoding.bytes(indices.size(), 4096));
    encoding.pack(kCpu, indices, 4096, bytes);
    std::vector<std::int64_t> back(indices.size());
    encoding.unpack(kCpu, bytes, 4096, back);
    EXPECT_EQ(back, indices) << name;
    EXPECT_THROW(encoding.unpack(kCpu, bytes, 4000, back), Error) << name;  // 4095 is past a limit of 4000
  }
}

TEST(SparseWires, EachCompressorCountsItsBytesByHand) {
  const std::vector<std::int64_t> vector1000{1000}, vector4096{4096}, matrix{64, 64};
  const UnitContext unit1000{.unit_id = 1, .name = "v", .shape = vector1000};
  const UnitContext unit4096{.unit_id = 1, .name = "w", .shape = vector4096};
  const UnitContext block{.unit_id = 1, .name = "m", .shape = matrix};
  // topk, k = 10: uint16 indices (1000 entries) and 10 sign bits with their fp32 magnitude.
  EXPECT_EQ(make({"compressor.name=topk", "compressor.topk.k=10", "compressor.topk.value_type=scaled_sign",
                  "compressor.topk.index_width=smallest"})
                ->wire_bytes(unit1000, 0),
            10u * 2u + 2u + 4u);
  // topk, k = 10: five 12-bit pairs and 2-bit codes with their codebook.
  EXPECT_EQ(make({"compressor.name=topk", "compressor.topk.k=10", "compressor.topk.value_type=codebook",
                  "compressor.topk.index_width=packed12"})
                ->wire_bytes(unit4096, 0),
            15u + 3u + 20u);
  // randomk, k = 10: no indices; values on a 16-bin codebook (4 bits).
  const auto randomk = make({"compressor.name=randomk", "compressor.randomk.k=10",
                             "compressor.randomk.value_type=codebook", "compressor.randomk.bins=16"});
  EXPECT_EQ(randomk->wire_bytes(unit1000, 0), 5u + 4u * 17u);
  EXPECT_EQ(randomk->aggregation(), Aggregation::Gathered);
  EXPECT_EQ(make({"compressor.name=randomk", "compressor.randomk.k=10"})->aggregation(), Aggregation::Summable);
  // dct_topk, one 64 × 64 block, 32 coefficients: SparseLoCo's wire after a DCT, the reference, 1 bit.
  EXPECT_EQ(make({"compressor.name=dct_topk", "compressor.dct_topk.value_type=codebook",
                  "compressor.dct_topk.index_width=packed12"})
                ->wire_bytes(block, 0),
            48u + 8u + 20u);
  EXPECT_EQ(make({"compressor.name=dct_topk"})->wire_bytes(block, 0), 32u * 8u + 32u * 4u);
  EXPECT_EQ(make({"compressor.name=dct_topk", "compressor.dct_topk.wire=compact_1bit"})->wire_bytes(block, 0),
            32u * 2u + 4u);
}

// topk at 2 ranks with sign values: each rank's k entries at ±(its mean magnitude), summed / 2.
TEST(SparseWires, TopkWithScaledSignsAggregatesTheDecodedValues) {
  const std::vector<std::string> settings = {"compressor.name=topk", "compressor.topk.k=9",
                                             "compressor.topk.value_type=scaled_sign",
                                             "compressor.topk.error_feedback=false"};
  const auto ranks = ranks_of(2, settings);
  const std::vector<std::int64_t> shape{200};
  const UnitContext unit{.unit_id = 2, .name = "v", .shape = shape};
  const std::vector<std::vector<float>> inputs = {normal_values(200, 1), normal_values(200, 2)};
  const auto out = test::loopback_unit(ranks, unit, inputs);
  std::vector<float> expected(200, 0.0f);
  for (const auto& input : inputs) {
    std::vector<std::int64_t> indices(9);
    std::vector<float> values(9);
    kernels::topk_global(kCpu, input, 9, indices, values);
    const std::vector<float> decoded = round_trip(ValueEncoding::parse("scaled_sign"), values);
    for (std::size_t j = 0; j < 9; ++j) expected[static_cast<std::size_t>(indices[j])] += decoded[j];
  }
  for (std::size_t i = 0; i < 200; ++i) EXPECT_FLOAT_EQ(out[1][i], expected[i] / 2.0f) << i;
}

// randomk at 3 ranks with sign values: gathered, so every chosen coordinate holds the mean of the
// ranks' signs there (±1/3 or ±1) and every other one 0.
TEST(SparseWires, RandomkWithSignsIsTheMeanOfTheRanksSigns) {
  const auto ranks = ranks_of(3, {"compressor.name=randomk", "compressor.randomk.k=40",
                                  "compressor.randomk.value_type=sign", "compressor.randomk.error_feedback=false"});
  const std::vector<std::int64_t> shape{300};
  const UnitContext unit{.step = 3, .unit_id = 2, .name = "v", .shape = shape};
  const std::vector<std::vector<float>> inputs = {normal_values(300, 4), normal_values(300, 5), normal_values(300, 6)};
  const auto out = test::loopback_unit(ranks, unit, inputs);
  int chosen = 0;
  for (std::size_t i = 0; i < 300; ++i) {
    if (out[0][i] == 0.0f) continue;
    ++chosen;
    float signs = 0;
    for (const auto& input : inputs) signs += std::signbit(input[i]) ? -1.0f : 1.0f;
    EXPECT_FLOAT_EQ(out[0][i], signs / 3.0f) << i;
  }
  EXPECT_EQ(chosen, 40);
}

// dct_topk's explicit keys reproduce its named wires bit for bit: reference = int64 + fp32,
// compact_1bit = smallest + sign; and 12-bit indices are lossless.
TEST(SparseWires, DctTopkKeysReproduceItsNamedWires) {
  const std::vector<std::int64_t> shape{24, 40};
  const UnitContext unit{.unit_id = 3, .name = "w", .shape = shape};
  const std::vector<std::vector<float>> inputs = {normal_values(960, 7), normal_values(960, 8), normal_values(960, 9)};
  const std::vector<std::string> base = {"compressor.name=dct_topk", "compressor.dct_topk.chunk=8",
                                         "compressor.dct_topk.topk=5", "compressor.dct_topk.error_feedback=false"};
  const auto with = [&](std::vector<std::string> extra) {
    extra.insert(extra.begin(), base.begin(), base.end());
    return test::loopback_unit(ranks_of(3, extra), unit, inputs)[2];
  };
  const auto reference = with({});
  EXPECT_EQ(with({"compressor.dct_topk.index_width=packed12"}), reference);
  EXPECT_EQ(with({"compressor.dct_topk.value_type=fp32", "compressor.dct_topk.index_width=int64"}), reference);
  EXPECT_EQ(with({"compressor.dct_topk.wire=compact_1bit"}),
            with({"compressor.dct_topk.value_type=sign", "compressor.dct_topk.index_width=smallest"}));
  EXPECT_NE(with({"compressor.dct_topk.value_type=codebook"}), reference);
}

TEST(SparseWires, TwelveBitIndicesOnAUnitPastTheirReachSayWhatToSet) {
  const auto ranks = ranks_of(1, {"compressor.name=topk", "compressor.topk.k=3", "compressor.topk.index_width=packed12"});
  const std::vector<std::int64_t> shape{5000};
  const UnitContext unit{.unit_id = 1, .name = "big", .shape = shape};
  EXPECT_THAT([&] { test::loopback_unit(ranks, unit, {normal_values(5000, 1)}); },
              ThrowsMessage<Error>(HasSubstr("packed12 holds indices below 4096, but 5000 entries are addressed")));
}

}  // namespace
}  // namespace lowcomm
