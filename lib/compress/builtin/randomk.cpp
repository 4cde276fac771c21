// `randomk`: k coordinates drawn at random, the same on every rank (from the run's seed, the step
// and the unit): no indices travel. In fp32 a plain all-reduce of the k values aggregates them;
// in any other value encoding (value_encoding.hpp) a sum of payloads is not a payload, so each
// rank's is gathered, decoded, and the sum divided by W. Error feedback keeps the values as
// received.
#include <fmt/format.h>

#include <algorithm>
#include <bit>

#include "builtins.hpp"
#include "lowcomm/error.hpp"
#include "lowcomm/kernels/scatter.hpp"
#include "shared/shared_random.hpp"
#include "shared/wire_fields.hpp"

namespace lowcomm::builtin {

namespace {

struct Chosen {
  std::vector<std::int64_t> indices;  // this step's coordinates, increasing
  std::vector<float> values;          // the gradient's there, as received
  std::vector<std::uint64_t> picked;  // one bit per coordinate, all clear between calls
};

class RandomK final : public CompressorWith<Chosen> {
 public:
  RandomK(double ratio, std::optional<std::int64_t> k, ValueEncoding values)
      : ratio_(ratio), k_(k), values_(values) {}

  Aggregation aggregation() const override {
    return values_.summable() ? Aggregation::Summable : Aggregation::Gathered;
  }
  bool supports(Granularity) const override { return true; }

  Message encode(const UnitContext& unit, std::span<const float> gradient, Chosen& chosen) override {
    choose(unit, chosen);
    chosen.values.resize(chosen.indices.size());
    kernels::gather(unit.execution.backend, chosen.indices, gradient, chosen.values);
    if (values_.summable()) return Message::sum_view(chosen.values);  // the scratch outlives the step
    std::vector<std::byte> payload(values_.bytes(chosen.values.size()));
    values_.encode(unit.execution.backend, chosen.values, payload);
    values_.decode(unit.execution.backend, std::span<const std::byte>(payload), chosen.values);
    for (float& v : chosen.values) v = 0.0f + v;  // what the dense form, 0 + v at each index, holds
    return Message::gather(std::move(payload));
  }

  std::optional<Message> decode(const UnitContext& unit, int, const Received& received, Chosen& chosen,
                                std::span<float> aggregate) override {
    const float ranks = static_cast<float>(unit.contributors());
    if (values_.summable()) {
      if (received.sum.size() != chosen.indices.size()) {
        throw Error(fmt::format("randomk: unit '{}' received {} values for {} coordinates", unit.name,
                                received.sum.size(), chosen.indices.size()));
      }
      kernels::scatter_divided(unit.execution.backend, chosen.indices, received.sum, ranks, aggregate);
      return std::nullopt;
    }
    // Each rank's values decoded and summed in rank order, then divided by W, as the sum would be.
    const std::size_t k = chosen.indices.size();
    std::vector<float> sum(k, 0.0f), values(k);
    for (std::size_t w = 0; w < received.gathered.size(); ++w) {
      const std::span<const std::byte> payload = received.gathered[w];
      if (payload.size() != values_.bytes(k)) {
        throw Error(fmt::format("randomk: rank {} sent {} bytes for unit '{}', expected {}", received.sender(w),
                                payload.size(), unit.name, values_.bytes(k)));
      }
      values_.decode(unit.execution.backend, payload, values);
      for (std::size_t i = 0; i < k; ++i) sum[i] += values[i];
    }
    kernels::scatter_divided(unit.execution.backend, chosen.indices, sum, ranks, aggregate);
    return std::nullopt;
  }

  Transmitted transmitted(const UnitContext&, std::span<const float>, const Chosen& chosen,
                          std::span<float>) const override {
    return Transmitted::entries(chosen.indices, chosen.values);
  }

  std::optional<std::uint64_t> wire_bytes(const UnitContext& unit, int) const override {
    return values_.bytes(static_cast<std::size_t>(count(unit.numel())));
  }

 private:
  std::int64_t count(std::int64_t n) const {
    const std::int64_t k = k_ ? *k_ : static_cast<std::int64_t>(ratio_ * static_cast<double>(n));
    return std::clamp<std::int64_t>(k, 1, std::max<std::int64_t>(n, 1));
  }

  // Floyd's sampling of k distinct indices out of n, in increasing order: O(k) draws. The set is
  // a bitmap (a hash set cost 10x more per pick); the increasing order comes from walking the
  // bitmap when k is dense enough to make that cheaper than sorting the picks.
  void choose(const UnitContext& unit, Chosen& state) const {
    const std::int64_t n = unit.numel();
    const std::int64_t k = count(n);
    const auto words = static_cast<std::size_t>((n + 63) / 64);
    std::vector<std::uint64_t>& picked = state.picked;
    if (picked.size() != words) picked.assign(words, 0);
    std::vector<std::int64_t>& chosen = state.indices;
    chosen.clear();
    SharedRandom random(unit.shared_seed, unit.step, unit.unit_id);
    const auto pick = [&](std::int64_t i) {
      std::uint64_t& word = picked[static_cast<std::size_t>(i / 64)];
      const std::uint64_t bit = std::uint64_t{1} << (i % 64);
      if (word & bit) return false;
      word |= bit;
      chosen.push_back(i);
      return true;
    };
    for (std::int64_t j = n - k; j < n; ++j) {
      const auto t = static_cast<std::int64_t>(random.below_or_equal(static_cast<std::uint64_t>(j)));
      if (!pick(t)) pick(j);  // j is always new: earlier draws were at most j - 1
    }
    if (chosen.size() * 16 >= words) {  // dense: read the picks back in order, clearing the bitmap
      chosen.clear();
      for (std::size_t w = 0; w < words; ++w) {
        for (std::uint64_t bits = picked[w]; bits != 0; bits &= bits - 1) {
          chosen.push_back(static_cast<std::int64_t>(w * 64) + std::countr_zero(bits));
        }
        picked[w] = 0;
      }
    } else {
      std::sort(chosen.begin(), chosen.end());
      for (const std::int64_t i : chosen) picked[static_cast<std::size_t>(i / 64)] = 0;
    }
  }

  double ratio_;
  std::optional<std::int64_t> k_;
  ValueEncoding values_;
};

struct RandomKOptions {
  double ratio = 0.01;
  std::optional<std::int64_t> k;
  std::string value_type = "fp32";
  std::int64_t bins = 4;
  double range = 6.0;
};

const OptionsSchema<RandomKOptions>& randomk_schema() {
  static const auto schema = [] {
    OptionsSchema<RandomKOptions> s;
    s.field("ratio", &RandomKOptions::ratio, "fraction of coordinates kept per unit (k = max(1, floor(ratio n)))",
            {.min = 1e-9, .max = 1.0})
        .field("k", &RandomKOptions::k, "coordinates kept per unit; replaces ratio when set", {.min = 1.0});
    value_encoding_fields(s, " (all but fp32 are gathered: a sum of encoded payloads is not one)");
    return s;
  }();
  return schema;
}

}  // namespace

CompressorInfo randomk_compressor() {
  return {.name = "randomk",
          .description = "k random coordinates, the same on every rank (shared seed): values only",
          .parameters = randomk_schema().keys(),
          .wire_examples = {{"ratio=0.2"}, {"ratio=0.2", "value_type=codebook", "bins=3"}, {"ratio=0.2", "value_type=scaled_sign"}},
          .error_feedback_by_default = true,
          .create = [](const CompressorParameters& p) -> std::unique_ptr<Compressor> {
            const RandomKOptions o = randomk_schema().read(p);
            return std::make_unique<RandomK>(o.ratio, o.k, ValueEncoding::parse(o.value_type, o.bins, o.range));
          },
          .label = {{"ratio", "ratio"}}};
}

}  // namespace lowcomm::builtin
