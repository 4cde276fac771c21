// `topk`: the k entries of largest magnitude (REFERENCE.md §2), with their indices. Payloads are
// gathered; duplicates across ranks accumulate, and the sum is divided by W. Ties go to the lower
// index, so runs are deterministic. Error feedback (on by default) keeps the rest, as received:
// the values after their trip through the wire's encoding (value_encoding.hpp: fp32, fp16, bf16,
// SparseLoCo's codebook, or a sign bit; MuLoCo's 2-bit top-k at value_type = codebook, bins = 4),
// the indices in any of index_encoding.hpp's widths. Error feedback's correction, gradient +
// β·residual, is formed in the selection's first pass (fused_correction.hpp) where the backend has
// the kernel (Reference, Cpu: kernels::corrected_topk_global).
//
// exchange = "tree" is gTop-k (Shi et al., ICDCS 2019; hclhkbu/gtopkssgd): instead of every
// payload to every rank, payloads merge pairwise up a butterfly (merge_schedule.hpp), each merge
// summing the entries the two share and keeping the k largest |sum| (ties: lower index), so each
// rank sends k entries per round, log2 W rounds. The aggregate is the global k entries over W.
// As the paper, error feedback counts a rank's entry as sent when its index is among the global
// k (even if a merge on the way dropped this rank's own value there); the rest stays residual.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "builtins.hpp"
#include "lowcomm/compress/fused_correction.hpp"
#include "lowcomm/error.hpp"
#include "lowcomm/kernels/backend.hpp"
#include "lowcomm/kernels/scatter.hpp"
#include "lowcomm/kernels/topk.hpp"
#include "shared/wire_fields.hpp"

namespace lowcomm::builtin {

namespace {

struct Selection {
  std::vector<std::int64_t> indices;
  std::vector<float> values;  // as received (decoded from the wire's encoding), −0 made +0
  // The tree: the entries above whose index is among the global k (what error feedback counts sent).
  std::vector<std::int64_t> kept_indices;
  std::vector<float> kept_values;
  // The decode's: every rank's entries, and one bit per element (all clear between calls).
  std::vector<std::int64_t> received_indices;
  std::vector<float> received_values;
  std::vector<std::uint64_t> divided;
};

// Entries of one payload, checked: every index distinct (a merge relies on it).
struct Entries {
  std::vector<std::int64_t> indices;
  std::vector<float> values;
};

class TopK final : public CompressorWith<Selection>, public FusedCorrection {
 public:
  TopK(double ratio, std::optional<std::int64_t> k, ValueEncoding values, IndexEncoding indices, bool tree)
      : ratio_(ratio), k_(k), values_(values), indices_(indices), tree_(tree) {}

  Aggregation aggregation() const override { return tree_ ? Aggregation::Merged : Aggregation::Gathered; }
  bool supports(Granularity) const override { return true; }

  Message encode(const UnitContext& unit, std::span<const float> gradient, Selection& selection) override {
    const std::int64_t k = resized(unit, selection);
    kernels::topk_global(unit.execution.backend, gradient, k, selection.indices, selection.values);
    return send(unit, selection);
  }

  FusedCorrection* fused_correction() override { return this; }

  bool corrects(const UnitContext& unit) const override {
    return kernels::implements(unit.execution.backend, "corrected_topk_global");
  }

  // encode of decay·residual + gradient, formed in the selection's first pass.
  Message encode_correcting(const UnitContext& unit, float decay, std::span<const float> residual,
                            std::span<const float> gradient, std::span<float> corrected,
                            UnitScratch& scratch) override {
    Selection& selection = scratch.get_or_create<Selection>();
    const std::int64_t k = resized(unit, selection);
    kernels::corrected_topk_global(unit.execution.backend, decay, residual, gradient, corrected, k,
                                   selection.indices, selection.values);
    return send(unit, selection);
  }

  // gTop-k's merge: the union of the two entry sets, summed where both hold an index, cut to the
  // k largest |value| (ties: lower index), sorted by index. a + b == b + a, so both ranks of a
  // pair compute the same bytes.
  std::vector<std::byte> merge(const UnitContext& unit, std::span<const std::byte> mine,
                               std::span<const std::byte> theirs) const override {
    const Entries a = entries(unit, mine, "its own merged payload"), b = entries(unit, theirs, "its partner's payload");
    Entries both;
    std::size_t i = 0, j = 0;
    while (i < a.indices.size() || j < b.indices.size()) {
      if (j == b.indices.size() || (i < a.indices.size() && a.indices[i] < b.indices[j])) {
        both.indices.push_back(a.indices[i]);
        both.values.push_back(a.values[i++]);
      } else if (i == a.indices.size() || b.indices[j] < a.indices[i]) {
        both.indices.push_back(b.indices[j]);
        both.values.push_back(b.values[j++]);
      } else {
        both.indices.push_back(a.indices[i]);
        both.values.push_back(a.values[i++] + b.values[j++]);
      }
    }
    std::vector<std::size_t> order(both.indices.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    const auto k = std::min(order.size(), static_cast<std::size_t>(count(unit.numel())));
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k), order.end(),
                      [&](std::size_t x, std::size_t y) {
                        const float ax = std::abs(both.values[x]), ay = std::abs(both.values[y]);
                        return ax != ay ? ax > ay : both.indices[x] < both.indices[y];
                      });
    order.resize(k);
    std::ranges::sort(order);  // positions in `both` are in index order
    Entries kept;
    for (const std::size_t at : order) {
      kept.indices.push_back(both.indices[at]);
      kept.values.push_back(both.values[at]);
    }
    std::vector<std::byte> payload(payload_bytes(unit));
    const auto [index_part, value_part] = split(std::span(payload), unit);
    indices_.pack(unit.execution.backend, kept.indices, limit(unit), index_part);
    values_.encode(unit.execution.backend, kept.values, value_part);
    return payload;
  }

  std::optional<Message> decode(const UnitContext& unit, int, const Received& received, Selection& selection,
                                std::span<float> aggregate) override {
    if (tree_) return decode_merged(unit, received.merged, selection, aggregate);
    const auto k = static_cast<std::size_t>(count(unit.numel()));
    const std::size_t world = received.gathered.size();
    std::vector<std::int64_t>& indices = selection.received_indices;
    std::vector<float>& values = selection.received_values;
    indices.resize(k * world);
    values.resize(k * world);
    std::fill(aggregate.begin(), aggregate.end(), 0.0f);
    for (std::size_t w = 0; w < world; ++w) {
      const std::span<const std::byte> payload = received.gathered[w];
      if (payload.size() != payload_bytes(unit)) {
        throw Error(fmt::format("topk: rank {} sent {} bytes for unit '{}', expected {}", received.sender(w), payload.size(),
                                unit.name, payload_bytes(unit)));
      }
      const auto [index_part, value_part] = split(payload, unit);
      const auto rank_indices = std::span(indices).subspan(w * k, k);
      const auto rank_values = std::span(values).subspan(w * k, k);
      indices_.unpack(unit.execution.backend, index_part, limit(unit), rank_indices);
      values_.decode(unit.execution.backend, value_part, rank_values);
      kernels::scatter_add(unit.execution.backend, rank_indices, rank_values, aggregate);
    }
    divide_received(unit, selection, aggregate);
    return std::nullopt;
  }

  // aggregate[i] /= W where some rank sent index i, once each (a bit per element marks it): the
  // other elements are +0, which the division leaves +0, so this is the whole tensor's division
  // bit for bit without a pass over it.
  static void divide_received(const UnitContext& unit, Selection& selection, std::span<float> aggregate) {
    const float ranks = static_cast<float>(unit.contributors());
    std::vector<std::uint64_t>& divided = selection.divided;
    divided.resize((aggregate.size() + 63) / 64, 0);
    for (const std::int64_t i : selection.received_indices) {
      std::uint64_t& word = divided[static_cast<std::size_t>(i / 64)];
      const std::uint64_t bit = std::uint64_t{1} << (i % 64);
      if ((word & bit) != 0) continue;
      word |= bit;
      aggregate[static_cast<std::size_t>(i)] /= ranks;
    }
    for (const std::int64_t i : selection.received_indices) divided[static_cast<std::size_t>(i / 64)] = 0;
  }

  Transmitted transmitted(const UnitContext&, std::span<const float>, const Selection& selection,
                          std::span<float>) const override {
    if (tree_) return Transmitted::entries(selection.kept_indices, selection.kept_values);
    return Transmitted::entries(selection.indices, selection.values);
  }

  std::optional<std::uint64_t> wire_bytes(const UnitContext& unit, int) const override {
    return payload_bytes(unit);
  }

 private:
  // The selection sized for this unit's k; k.
  std::int64_t resized(const UnitContext& unit, Selection& selection) const {
    const std::int64_t k = count(unit.numel());
    selection.indices.resize(static_cast<std::size_t>(k));
    selection.values.resize(static_cast<std::size_t>(k));
    return k;
  }

  // The payload of the entries selected: indices, then values in the wire's encodings.
  Message send(const UnitContext& unit, Selection& selection) const {
    std::vector<std::byte> payload(payload_bytes(unit));
    const auto [index_part, value_part] = split(std::span(payload), unit);
    indices_.pack(unit.execution.backend, selection.indices, limit(unit), index_part);
    values_.encode(unit.execution.backend, selection.values, value_part);
    // What receivers will see: the values after the trip through the wire.
    values_.decode(unit.execution.backend, std::span<const std::byte>(value_part), selection.values);
    for (float& v : selection.values) v = 0.0f + v;  // what the dense form, 0 + v at each index, holds
    return tree_ ? Message::merge(std::move(payload)) : Message::gather(std::move(payload));
  }

  // A payload's entries, sorted by index; throws naming `whose` for a wrong size or a repeated index.
  Entries entries(const UnitContext& unit, std::span<const std::byte> payload, const char* whose) const {
    if (payload.size() != payload_bytes(unit)) {
      throw Error(fmt::format("topk (tree): {} for unit '{}' holds {} bytes, expected {}", whose, unit.name,
                              payload.size(), payload_bytes(unit)));
    }
    const auto k = static_cast<std::size_t>(count(unit.numel()));
    Entries e{std::vector<std::int64_t>(k), std::vector<float>(k)};
    const auto [index_part, value_part] = split(payload, unit);
    indices_.unpack(unit.execution.backend, index_part, limit(unit), e.indices);
    values_.decode(unit.execution.backend, value_part, e.values);
    std::vector<std::size_t> order(k);
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::ranges::sort(order, [&](std::size_t x, std::size_t y) { return e.indices[x] < e.indices[y]; });
    Entries sorted;
    for (const std::size_t at : order) {
      if (!std::isfinite(e.values[at])) {  // a sum with it means nothing, and |NaN| would break the selection
        throw Error(fmt::format("topk (tree): {} for unit '{}' holds {} at index {}", whose, unit.name, e.values[at],
                                e.indices[at]));
      }
      if (!sorted.indices.empty() && sorted.indices.back() == e.indices[at]) {
        throw Error(fmt::format("topk (tree): {} for unit '{}' repeats index {}", whose, unit.name, e.indices[at]));
      }
      sorted.indices.push_back(e.indices[at]);
      sorted.values.push_back(e.values[at]);
    }
    return sorted;
  }

  // The global k over the ranks, and which of this rank's own entries are among them.
  std::optional<Message> decode_merged(const UnitContext& unit, std::span<const std::byte> merged, Selection& selection,
                                       std::span<float> aggregate) const {
    const Entries global = entries(unit, merged, "the merged payload");
    std::fill(aggregate.begin(), aggregate.end(), 0.0f);
    kernels::scatter_add(unit.execution.backend, global.indices, global.values, aggregate);
    const float ranks = static_cast<float>(unit.contributors());
    for (float& x : aggregate) x /= ranks;
    selection.kept_indices.clear();
    selection.kept_values.clear();
    for (std::size_t j = 0; j < selection.indices.size(); ++j) {
      if (std::ranges::binary_search(global.indices, selection.indices[j])) {
        selection.kept_indices.push_back(selection.indices[j]);
        selection.kept_values.push_back(selection.values[j]);
      }
    }
    return std::nullopt;
  }

  std::int64_t count(std::int64_t n) const {
    const std::int64_t k = k_ ? *k_ : static_cast<std::int64_t>(ratio_ * static_cast<double>(n));
    return std::clamp<std::int64_t>(k, 1, std::max<std::int64_t>(n, 1));
  }
  static std::uint64_t limit(const UnitContext& unit) { return static_cast<std::uint64_t>(unit.numel()); }
  std::size_t index_bytes(const UnitContext& unit) const {
    return indices_.bytes(static_cast<std::size_t>(count(unit.numel())), limit(unit));
  }
  std::size_t payload_bytes(const UnitContext& unit) const {
    return index_bytes(unit) + values_.bytes(static_cast<std::size_t>(count(unit.numel())));
  }
  template <class Byte>
  std::pair<std::span<Byte>, std::span<Byte>> split(std::span<Byte> payload, const UnitContext& unit) const {
    return {payload.first(index_bytes(unit)), payload.subspan(index_bytes(unit))};
  }

  double ratio_;
  std::optional<std::int64_t> k_;
  ValueEncoding values_;
  IndexEncoding indices_;
  bool tree_;
};

struct TopKOptions {
  double ratio = 0.01;
  std::optional<std::int64_t> k;
  std::string value_type = "fp32";
  std::int64_t bins = 4;
  double range = 6.0;
  std::string index_width = "int32";
  std::string exchange = "gather";
};

const OptionsSchema<TopKOptions>& topk_schema() {
  static const auto schema = [] {
    OptionsSchema<TopKOptions> s;
    s.field("ratio", &TopKOptions::ratio, "fraction kept per unit: k = max(1, floor(ratio n))", {.min = 1e-9, .max = 1.0})
        .field("k", &TopKOptions::k, "entries kept per unit; replaces ratio when set", {.min = 1.0});
    value_encoding_fields(s);
    index_encoding_fields(s);
    s.field("exchange", &TopKOptions::exchange,
            "gather (every payload to every rank) or tree (gTop-k: payloads merged pairwise, the k largest sums "
            "kept at each merge; fp32 values only)",
            {.choices = {"gather", "tree"}});
    return s;
  }();
  return schema;
}

}  // namespace

CompressorInfo topk_compressor() {
  return {.name = "topk",
          .description = "the k largest-magnitude entries with their indices (gathered, or merged up gTop-k's tree); duplicates accumulate",
          .parameters = topk_schema().keys(),
          .wire_examples = {{"ratio=0.2"},
                       {"ratio=0.2", "value_type=codebook", "index_width=packed12"},
                       {"ratio=0.2", "value_type=sign", "index_width=smallest"},
                       {"ratio=0.2", "value_type=fp16", "index_width=int64"},
                       {"ratio=0.2", "exchange=tree"}},
          .error_feedback_by_default = true,
          .create = [](const CompressorParameters& p) -> std::unique_ptr<Compressor> {
            const TopKOptions o = topk_schema().read(p);
            const bool tree = o.exchange == "tree";
            if (tree && o.value_type != "fp32") {
              throw ConfigError(fmt::format("compressor.topk.exchange = \"tree\" sums values at every merge, which "
                                            "needs value_type = \"fp32\" (got \"{}\")",
                                            o.value_type));
            }
            return std::make_unique<TopK>(o.ratio, o.k, ValueEncoding::parse(o.value_type, o.bins, o.range),
                                          IndexEncoding::parse(o.index_width), tree);
          },
          .label = {{"ratio", "ratio"}}};
}

}  // namespace lowcomm::builtin
