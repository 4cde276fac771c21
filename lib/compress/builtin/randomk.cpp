// `randomk`: k coordinates drawn at random, the same on every rank (from the run's seed, the step
// and the unit), so a plain all-reduce of the k values aggregates them: no indices travel.
#include <fmt/format.h>

#include <algorithm>
#include <unordered_set>

#include "builtins.hpp"
#include "lowcomm/error.hpp"
#include "shared_random.hpp"

namespace lowcomm::builtin {

namespace {

class RandomK final : public Compressor {
 public:
  RandomK(double ratio, std::optional<std::int64_t> k) : ratio_(ratio), k_(k) {}

  Aggregation aggregation() const override { return Aggregation::Summable; }
  bool supports(Granularity) const override { return true; }

  Message encode(const UnitContext& unit, std::span<const float> gradient, UnitScratch& scratch) override {
    const std::vector<std::int64_t>& chosen = choose(unit, scratch.get_or_create<Chosen>().indices);
    std::vector<float> values(chosen.size());
    for (std::size_t i = 0; i < chosen.size(); ++i) values[i] = gradient[static_cast<std::size_t>(chosen[i])];
    return Message::sum(std::move(values));
  }

  std::optional<Message> decode(const UnitContext& unit, int, const Received& received, UnitScratch& scratch,
                                std::span<float> aggregate) override {
    const std::vector<std::int64_t>& chosen = scratch.get<Chosen>().indices;
    if (received.sum.size() != chosen.size()) {
      throw Error(fmt::format("randomk: unit '{}' received {} values for {} coordinates", unit.name,
                              received.sum.size(), chosen.size()));
    }
    std::fill(aggregate.begin(), aggregate.end(), 0.0f);
    const float ranks = static_cast<float>(unit.world_size);
    for (std::size_t i = 0; i < chosen.size(); ++i) {
      aggregate[static_cast<std::size_t>(chosen[i])] = received.sum[i] / ranks;
    }
    return std::nullopt;
  }

  void transmitted(const UnitContext&, std::span<const float> input, const UnitScratch& scratch,
                   std::span<float> out) const override {
    std::fill(out.begin(), out.end(), 0.0f);
    for (std::int64_t i : scratch.get<Chosen>().indices) out[static_cast<std::size_t>(i)] = input[static_cast<std::size_t>(i)];
  }

  std::optional<std::uint64_t> wire_bytes(const UnitContext& unit, int) const override {
    return static_cast<std::uint64_t>(count(unit.numel())) * sizeof(float);
  }

 private:
  struct Chosen {
    std::vector<std::int64_t> indices;  // this step's coordinates, increasing
  };

  std::int64_t count(std::int64_t n) const {
    const std::int64_t k = k_ ? *k_ : static_cast<std::int64_t>(ratio_ * static_cast<double>(n));
    return std::clamp<std::int64_t>(k, 1, std::max<std::int64_t>(n, 1));
  }

  // Floyd's sampling of k distinct indices out of n, in increasing order: O(k), not O(n).
  const std::vector<std::int64_t>& choose(const UnitContext& unit, std::vector<std::int64_t>& chosen) const {
    const std::int64_t n = unit.numel();
    const std::int64_t k = count(n);
    SharedRandom random(unit.shared_seed, unit.step, unit.unit_id);
    std::unordered_set<std::int64_t> picked;
    picked.reserve(static_cast<std::size_t>(k) * 2);
    for (std::int64_t j = n - k; j < n; ++j) {
      const auto t = static_cast<std::int64_t>(random.below_or_equal(static_cast<std::uint64_t>(j)));
      picked.insert(picked.contains(t) ? j : t);
    }
    chosen.assign(picked.begin(), picked.end());
    std::sort(chosen.begin(), chosen.end());
    return chosen;
  }

  double ratio_;
  std::optional<std::int64_t> k_;
};

}  // namespace

CompressorInfo randomk_compressor() {
  return {.name = "randomk",
          .description = "k random coordinates, the same on every rank (shared seed): values only",
          .parameters = {{.path = "ratio", .type = ValueType::Float, .default_value = 0.01,
                          .description = "fraction of coordinates kept per unit (k = max(1, floor(ratio n)))",
                          .min = 1e-9, .max = 1.0},
                         {.path = "k", .type = ValueType::Integer,
                          .description = "coordinates kept per unit; replaces ratio when set",
                          .min = 1.0, .optional = true}},
          .error_feedback_by_default = true,
          .create = [](const CompressorParameters& p) -> std::unique_ptr<Compressor> {
            return std::make_unique<RandomK>(p.get_double("ratio"),
                                             p.has("k") ? std::optional(p.get_int("k")) : std::nullopt);
          }};
}

}  // namespace lowcomm::builtin
