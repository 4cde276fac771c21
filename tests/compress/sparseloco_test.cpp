// The `sparseloco` compressor against tests/fixtures/sparseloco.h5 (make_sparseloco_fixture.py:
// templar's compress.py semantics in torch): the 12-bit packing byte for byte, the codebook's
// codes exactly and its values to float rounding, and for 1 to 4 ranks which entries each rank
// sends, what it decodes them to, and the aggregate with peer-norm clipping; the bytes on the wire
// by hand; a block of one entry; a malformed payload.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fmt/format.h>

#include "fixtures/fixtures.hpp"
#include "loopback.hpp"
#include "lowcomm/compress/error_feedback.hpp"
#include "lowcomm/compress/registry.hpp"
#include "lowcomm/compress/codebook.hpp"
#include "lowcomm/error.hpp"
#include "lowcomm/kernels/pack.hpp"
#include "lowcomm/kernels/topk.hpp"

namespace lowcomm {
namespace {

const test::FixtureFile& fixture() {
  static const test::FixtureFile file(LOWCOMM_SPARSELOCO_FIXTURE);
  return file;
}

std::unique_ptr<Compressor> make(std::vector<std::string> settings) {
  ConfigSchema schema;
  CompressorRegistry::global().add_config_keys(schema);
  settings.insert(settings.begin(), "compressor.name=sparseloco");
  return CompressorRegistry::global().create(Config::defaults(schema, settings));
}

TEST(SparseLocoWire, TwelveBitIndicesAreTemplarsBytes) {
  const std::vector<std::int64_t> indices = fixture().ints("pack12/indices");
  std::vector<std::byte> packed(kernels::packed_12bit_bytes(indices.size()));
  kernels::pack_12bit(kernels::Backend::Cpu, indices, packed);
  const std::vector<std::int64_t> expected = fixture().ints("pack12/bytes");
  ASSERT_EQ(packed.size(), expected.size());
  for (std::size_t i = 0; i < packed.size(); ++i) EXPECT_EQ(std::to_integer<std::int64_t>(packed[i]), expected[i]) << i;
  std::vector<std::int64_t> back(indices.size());
  kernels::unpack_12bit(kernels::Backend::Cpu, packed, 4096, back);
  EXPECT_EQ(back, indices);
  // An odd count is completed by a 0 index; 4096 does not fit.
  std::vector<std::byte> three(3);
  kernels::pack_12bit(kernels::Backend::Cpu, std::vector<std::int64_t>{4095}, three);
  EXPECT_EQ(std::to_integer<int>(three[0]), 0xFF);
  EXPECT_EQ(std::to_integer<int>(three[1]), 0x0F);
  EXPECT_EQ(std::to_integer<int>(three[2]), 0x00);
  EXPECT_THROW(kernels::pack_12bit(kernels::Backend::Cpu, std::vector<std::int64_t>{4096}, three), Error);
}

// Codes exactly; the shift and the bins' means within 1e-6 (torch sums in its own order).
TEST(SparseLocoWire, TheCodebookIsTemplars) {
  const std::vector<float> values = fixture().floats("codebook/values");
  const Codebook book = make_codebook(values, 4, 6.0);
  const std::vector<std::int64_t> codes = fixture().ints("codebook/codes");
  ASSERT_EQ(book.codes.size(), codes.size());
  for (std::size_t i = 0; i < codes.size(); ++i) EXPECT_EQ(book.codes[i], codes[i]) << i;
  EXPECT_NEAR(book.shift, fixture().floats("codebook/shift")[0], 1e-6 * std::abs(book.shift) + 1e-12);
  const std::vector<float> lookup = fixture().floats("codebook/lookup");
  for (std::size_t b = 0; b < lookup.size(); ++b) EXPECT_NEAR(book.lookup[b], lookup[b], 1e-6 * std::abs(lookup[b]) + 1e-12);
  std::vector<std::byte> packed(kernels::packed_code_bytes(book.codes.size(), 2));
  kernels::pack_codes(kernels::Backend::Cpu, book.codes, 2, packed);
  std::vector<std::uint8_t> back(book.codes.size());
  kernels::unpack_codes(kernels::Backend::Cpu, packed, 2, 4, back);
  EXPECT_EQ(back, book.codes);
}

// The codebook as a value encoding of `topk` (value_type = codebook: MuLoCo's 2-bit top-k): the
// bytes by hand, and the aggregate is the mean of each rank's selection decoded on its codebook.
TEST(SparseLocoWire, TopkSendsItsValuesOnTheCodebook) {
  ConfigSchema schema;
  CompressorRegistry::global().add_config_keys(schema);
  const Config config = Config::defaults(
      schema, std::vector<std::string>{"compressor.name=topk", "compressor.topk.k=8", "compressor.topk.value_type=codebook",
                                       "compressor.topk.error_feedback=false"});
  std::vector<std::unique_ptr<Compressor>> ranks;
  for (int w = 0; w < 2; ++w) ranks.push_back(CompressorRegistry::global().create(config));
  const std::vector<std::int64_t> shape{100};
  const UnitContext unit{.unit_id = 4, .name = "v", .shape = shape};
  EXPECT_EQ(ranks[0]->wire_bytes(unit, 0), 8u * 4u + 2u + 20u);  // int32 indices, 16 bits of codes, the codebook
  std::vector<std::vector<float>> inputs(2, std::vector<float>(100));
  for (std::size_t i = 0; i < 100; ++i) {
    inputs[0][i] = std::sin(0.37f * static_cast<float>(i));
    inputs[1][i] = std::cos(0.23f * static_cast<float>(i)) * 0.5f;
  }
  const auto out = test::loopback_unit(ranks, unit, inputs);
  std::vector<float> expected(100, 0.0f);
  for (const auto& input : inputs) {
    std::vector<std::int64_t> indices(8);
    std::vector<float> values(8);
    kernels::topk_global(kernels::Backend::Cpu, input, 8, indices, values);
    const Codebook book = make_codebook(values, 4, 6.0);
    for (std::size_t j = 0; j < 8; ++j) expected[static_cast<std::size_t>(indices[j])] += book.decoded(book.codes[j]);
  }
  for (std::size_t i = 0; i < 100; ++i) EXPECT_FLOAT_EQ(out[0][i], expected[i] / 2.0f) << i;
}

// W ranks of a case through the compressor (error feedback on, so its residual shows what each
// rank sent): the entries each selected, their decoded values and the aggregate, within 1e-5 of
// the largest value.
TEST(SparseLoco, EntriesAndAggregateFollowTemplar) {
  for (const char* name : {"matrix", "odd_blocks", "vector", "one_rank"}) {
    SCOPED_TRACE(name);
    const std::string g = name;
    const std::vector<std::int64_t> shape = fixture().attr_ints(g, "shape");
    const auto world = static_cast<std::size_t>(fixture().attr_int(g, "W"));
    std::vector<std::unique_ptr<Compressor>> ranks;
    for (std::size_t w = 0; w < world; ++w) {
      ranks.push_back(make({fmt::format("compressor.sparseloco.chunk={}", fixture().attr_int(g, "chunk")),
                            fmt::format("compressor.sparseloco.topk={}", fixture().attr_int(g, "topk"))}));
    }
    const std::vector<float> all = fixture().floats(g + "/input");
    const std::size_t n = all.size() / world;
    std::vector<std::vector<float>> inputs;
    for (std::size_t w = 0; w < world; ++w) inputs.emplace_back(all.begin() + static_cast<std::ptrdiff_t>(w * n),
                                                                 all.begin() + static_cast<std::ptrdiff_t>((w + 1) * n));
    const UnitContext unit{.step = 0, .unit_id = 1, .name = name, .shape = shape};
    const auto out = test::loopback_unit(ranks, unit, inputs);
    const std::vector<float> aggregate = fixture().floats(g + "/aggregate");
    const std::vector<float> sent = fixture().floats(g + "/sent"), selected = fixture().floats(g + "/selected");
    float scale = 0;
    for (const float x : all) scale = std::max(scale, std::abs(x));
    for (std::size_t w = 0; w < world; ++w) {
      const std::span<const float> residual = dynamic_cast<const ErrorFeedback&>(*ranks[w]).residual(1);
      for (std::size_t i = 0; i < n; ++i) {
        const float own = inputs[w][i] - residual[i];  // what rank w sent of entry i (0 if nothing)
        const bool chosen = selected[w * n + i] != 0.0f;
        if (!chosen) ASSERT_EQ(residual[i], inputs[w][i]) << "rank " << w << " sent entry " << i << ", templar did not";
        ASSERT_NEAR(own, sent[w * n + i], 1e-5f * scale) << "rank " << w << " entry " << i;
        ASSERT_NEAR(out[w][i], aggregate[i], 1e-5f * scale) << "rank " << w << "'s aggregate at " << i;
      }
    }
  }
}

// The bytes on the wire by hand: a 128 x 96 tensor at chunk 64 is 2 x 2 blocks of 64 x 48; 8
// entries each: 32 indices of 12 bits (48 bytes), 32 codes of 2 bits (8 bytes), the shift and 4
// decoded means (20 bytes); one byte per code (templar's form): 32 bytes of codes; fp32 values: 128.
TEST(SparseLoco, CountsExactlyWhatItSends) {
  const std::vector<std::int64_t> shape{128, 96};
  const UnitContext unit{.unit_id = 0, .name = "w", .shape = shape};
  EXPECT_EQ(make({"compressor.sparseloco.topk=8"})->wire_bytes(unit, 0), 48u + 8u + 20u);
  EXPECT_EQ(make({"compressor.sparseloco.topk=8", "compressor.sparseloco.packed_codes=false"})->wire_bytes(unit, 0),
            48u + 32u + 20u);
  EXPECT_EQ(make({"compressor.sparseloco.topk=8", "compressor.sparseloco.bins=0"})->wire_bytes(unit, 0), 48u + 128u);
  // topk 7 is made even (6); 30 x 21 at chunk 8: blocks of 6 x 7, 5 x 3 of them; 90 indices,
  // 90 codes of 2 bits (23 bytes).
  const std::vector<std::int64_t> odd{30, 21};
  const UnitContext odd_unit{.unit_id = 0, .name = "w", .shape = odd};
  EXPECT_EQ(make({"compressor.sparseloco.topk=7", "compressor.sparseloco.chunk=8"})->wire_bytes(odd_unit, 0),
            135u + 23u + 20u);
}

// A prime length past the chunk is blocks of one entry (templar would ask torch.topk for 2 of 1):
// every entry is sent, and the aggregate is the mean, within the codebook's resolution.
TEST(SparseLoco, BlocksOfOneSendTheirEntry) {
  const std::vector<std::int64_t> shape{67};
  std::vector<std::unique_ptr<Compressor>> ranks;
  ranks.push_back(make({"compressor.sparseloco.error_feedback=false", "compressor.sparseloco.bins=0"}));
  ranks.push_back(make({"compressor.sparseloco.error_feedback=false", "compressor.sparseloco.bins=0",
                        "compressor.sparseloco.norm_clip=false"}));
  std::vector<std::vector<float>> inputs(2, std::vector<float>(67));
  for (std::size_t i = 0; i < 67; ++i) inputs[0][i] = static_cast<float>(i), inputs[1][i] = 1.0f;
  const auto out = test::loopback_unit(ranks, UnitContext{.unit_id = 3, .name = "b", .shape = shape}, inputs);
  for (std::size_t i = 0; i < 67; ++i) EXPECT_FLOAT_EQ(out[1][i], (static_cast<float>(i) + 1.0f) / 2.0f) << i;
}

TEST(SparseLoco, AMalformedPayloadIsRefused) {
  const std::vector<std::int64_t> shape{8, 8};
  const UnitContext unit{.unit_id = 0, .name = "w", .shape = shape};
  auto sparseloco = make({"compressor.sparseloco.topk=2", "compressor.sparseloco.error_feedback=false"});
  UnitScratch scratch;
  std::vector<float> input(64);
  for (std::size_t i = 0; i < input.size(); ++i) input[i] = std::sin(static_cast<float>(i));
  Message message = sparseloco->encode(unit, input, scratch);
  std::vector<std::byte> payload = message.bytes;
  payload[1] = std::byte{0xFF};  // index 0xF.. past the 64-entry block
  Received received;
  received.gathered.push_back(payload);
  std::vector<float> aggregate(64);
  EXPECT_THAT([&] { (void)sparseloco->decode(unit, 0, received, scratch, aggregate); },
              ::testing::ThrowsMessage<Error>(::testing::HasSubstr("is not below the limit 64")));
  received.gathered[0] = std::span(payload).first(payload.size() - 1);
  EXPECT_THAT([&] { (void)sparseloco->decode(unit, 0, received, scratch, aggregate); },
              ::testing::ThrowsMessage<Error>(::testing::HasSubstr("expected")));
}

}  // namespace
}  // namespace lowcomm
