// Every built-in compressor's decode (and its aggregate) on payloads it did not write. The input
// chooses the compressor and its wire (the cases below), the ranks W (1 to 4), the unit's shape,
// and how the payloads are made:
//   even mode  each rank's real payload (an encode of a seeded random gradient), then edits:
//              bytes overwritten, payloads cut short or lengthened; so the fuzzer works near
//              well-formed payloads, where the decoders' checks are;
//   odd mode   raw bytes, cut into W payloads (or read as the sums of a summed round).
// A multi-round compressor (PowerSGD) gets every round so made; a merging one (gTop-k, DeMo's,
// SparseLoCo's and the dense tree) merges the payloads so made one after another and decodes the result. Whatever
// arrives, merge and decode write their result or throw lowcomm::Error; nothing else.
#include <memory>
#include <string>
#include <vector>

#include "fuzz_input.hpp"
#include "lowcomm/compress/registry.hpp"

namespace lowcomm::fuzz {
namespace {

struct Case {
  std::string compressor;
  std::vector<std::string> settings;
};

// Every registered compressor's wire examples (CompressorInfo::wire_examples): each of its value
// and index encodings and exchanges, from its registration.
const std::vector<Case>& cases() {
  static const std::vector<Case> all = [] {
    std::vector<Case> cases;
    for (const CompressorInfo* info : CompressorRegistry::global().all()) {
      const std::vector<std::vector<std::string>> examples =
          info->wire_examples.empty() ? std::vector<std::vector<std::string>>{{}} : info->wire_examples;
      for (const std::vector<std::string>& example : examples) {
        Case c{info->name, {}};
        for (const std::string& setting : example) c.settings.push_back("compressor." + info->name + "." + setting);
        cases.push_back(std::move(c));
      }
    }
    return cases;
  }();
  return all;
}

const std::vector<std::vector<std::int64_t>> kShapes = {{1}, {7}, {100}, {13, 5}, {16, 24}, {3, 4, 5}};

// A fresh compressor of case `index` (no state carried from one input to the next, so that a
// finding reproduces from its input alone); each case's configuration is resolved once.
std::unique_ptr<Compressor> make(std::size_t index) {
  static const std::vector<Config> configs = [] {
    ConfigSchema schema;
    CompressorRegistry::global().add_config_keys(schema);
    std::vector<Config> all;
    for (const Case& c : cases()) {
      std::vector<std::string> settings = c.settings;
      settings.push_back(std::string("compressor.name=") + c.compressor);
      all.push_back(Config::defaults(schema, settings));
    }
    return all;
  }();
  return CompressorRegistry::global().create(configs[index]);
}

// One rank's gradient: a seeded sequence of small values, some repeated and some zero, so that
// ties and empty codebook bins occur.
std::vector<float> gradient(std::size_t n, std::uint64_t seed) {
  std::vector<float> g(n);
  for (std::size_t i = 0; i < n; ++i) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    g[i] = static_cast<float>(static_cast<std::int64_t>(seed >> 40) % 17 - 8) / 4.0f;
  }
  return g;
}

// The edits of even mode, applied to the encoded payloads: each takes a rank, a position and
// what to do there.
void edit(FuzzInput& in, std::vector<std::vector<std::byte>>& payloads) {
  const std::size_t edits = in.take_byte() % 8;
  for (std::size_t e = 0; e < edits && !in.empty(); ++e) {
    std::vector<std::byte>& p = payloads[in.take_index(payloads.size())];
    const std::size_t at = in.take_uint(2);
    switch (in.take_byte() % 4) {
      case 0:
      case 1:
        if (!p.empty()) p[at % p.size()] = static_cast<std::byte>(in.take_byte());
        break;
      case 2: p.resize(p.empty() ? 0 : at % p.size()); break;
      default: p.resize(p.size() + 1 + at % 16, static_cast<std::byte>(in.take_byte())); break;
    }
  }
}

void run(FuzzInput& in) {
  const std::size_t c = in.take_index(cases().size());
  const int world = 1 + in.take_byte() % 4;
  const std::vector<std::int64_t>& shape = kShapes[in.take_index(kShapes.size())];
  const bool raw = in.take_byte() % 2 == 1;
  const std::uint64_t seed = in.take_uint(2);

  std::vector<std::unique_ptr<Compressor>> ranks;
  std::vector<UnitScratch> scratch(static_cast<std::size_t>(world));
  for (int w = 0; w < world; ++w) ranks.push_back(make(c));
  UnitContext unit{.step = seed % 3, .unit_id = 1, .name = "fuzz", .shape = shape, .world_size = world,
                   .shared_seed = seed};
  const auto n = static_cast<std::size_t>(unit.numel());
  std::vector<std::vector<float>> gradients;
  std::vector<std::optional<Message>> messages;
  for (int w = 0; w < world; ++w) {
    unit.rank = w;
    gradients.push_back(gradient(n, seed + static_cast<std::uint64_t>(w)));
    messages.push_back(ranks[static_cast<std::size_t>(w)]->encode(unit, gradients.back(), scratch[static_cast<std::size_t>(w)]));
  }
  std::vector<float> aggregate(n);
  unit.rank = 0;
  for (int round = 0; round < 4 && messages[0]; ++round) {
    Received received;
    std::vector<float> sum;
    std::vector<std::vector<std::byte>> payloads;
    if (messages[0]->exchange == Exchange::Sum) {
      const std::span<const float> own = messages[0]->sum_values();
      sum.assign(own.begin(), own.end());
      if (raw) {
        for (float& x : sum) x = in.take_float();
        if (in.take_byte() % 4 == 0) sum.resize(in.take_index(sum.size() + 2));  // a sum of the wrong size
      }
      received.sum = sum;
    } else {
      for (int w = 0; w < world; ++w) {
        if (raw) {
          const std::span<const std::byte> bytes = in.take_bytes(in.take_uint(2) % 512);
          payloads.emplace_back(bytes.begin(), bytes.end());
        } else {
          payloads.push_back(messages[static_cast<std::size_t>(w)]->bytes);
        }
      }
      if (!raw) edit(in, payloads);
      if (messages[0]->exchange == Exchange::Merge) {
        for (std::size_t w = 1; w < payloads.size(); ++w) payloads[0] = ranks[0]->merge(unit, payloads[0], payloads[w]);
        received.merged = payloads[0];
      } else {
        for (const auto& p : payloads) received.gathered.emplace_back(p);
      }
    }
    messages[0] = ranks[0]->decode(unit, round, received, scratch[0], aggregate);
  }
}

}  // namespace
}  // namespace lowcomm::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  lowcomm::fuzz::FuzzInput in(data, size);
  lowcomm::fuzz::only_lowcomm_errors([&] { lowcomm::fuzz::run(in); });
  return 0;
}
