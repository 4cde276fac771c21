// `topk`: the k entries of largest magnitude (REFERENCE.md §2), with their indices. Payloads are
// gathered; duplicates across ranks accumulate, and the sum is divided by W. Ties go to the lower
// index, so runs are deterministic. Error feedback (on by default) keeps the rest, as received:
// the values after their trip through the wire's encoding (value_encoding.hpp: fp32, fp16, bf16,
// SparseLoCo's codebook, or a sign bit; MuLoCo's 2-bit top-k at value_type = codebook, bins = 4),
// the indices in any of index_encoding.hpp's widths.
#include <fmt/format.h>

#include <algorithm>

#include "builtins.hpp"
#include "lowcomm/error.hpp"
#include "lowcomm/kernels/scatter.hpp"
#include "lowcomm/kernels/topk.hpp"
#include "wire_fields.hpp"

namespace lowcomm::builtin {

namespace {

struct Selection {
  std::vector<std::int64_t> indices;
  std::vector<float> values;  // as received (decoded from the wire's encoding), −0 made +0
};

class TopK final : public CompressorWith<Selection> {
 public:
  TopK(double ratio, std::optional<std::int64_t> k, ValueEncoding values, IndexEncoding indices)
      : ratio_(ratio), k_(k), values_(values), indices_(indices) {}

  Aggregation aggregation() const override { return Aggregation::Gathered; }
  bool supports(Granularity) const override { return true; }

  Message encode(const UnitContext& unit, std::span<const float> gradient, Selection& selection) override {
    const auto k = static_cast<std::size_t>(count(unit.numel()));
    selection.indices.resize(k);
    selection.values.resize(k);
    kernels::topk_global(unit.execution.backend, gradient, static_cast<std::int64_t>(k), selection.indices, selection.values);
    std::vector<std::byte> payload(payload_bytes(unit));
    const auto [index_part, value_part] = split(std::span(payload), unit);
    indices_.pack(unit.execution.backend, selection.indices, limit(unit), index_part);
    values_.encode(unit.execution.backend, selection.values, value_part);
    // What receivers will see: the values after the trip through the wire.
    values_.decode(unit.execution.backend, std::span<const std::byte>(value_part), selection.values);
    for (float& v : selection.values) v = 0.0f + v;  // what the dense form, 0 + v at each index, holds
    return Message::gather(std::move(payload));
  }

  std::optional<Message> decode(const UnitContext& unit, int, const Received& received, Selection&,
                                std::span<float> aggregate) override {
    const auto k = static_cast<std::size_t>(count(unit.numel()));
    std::vector<std::int64_t> indices(k);
    std::vector<float> values(k);
    std::fill(aggregate.begin(), aggregate.end(), 0.0f);
    for (std::size_t w = 0; w < received.gathered.size(); ++w) {
      const std::span<const std::byte> payload = received.gathered[w];
      if (payload.size() != payload_bytes(unit)) {
        throw Error(fmt::format("topk: rank {} sent {} bytes for unit '{}', expected {}", received.sender(w), payload.size(),
                                unit.name, payload_bytes(unit)));
      }
      const auto [index_part, value_part] = split(payload, unit);
      indices_.unpack(unit.execution.backend, index_part, limit(unit), indices);
      values_.decode(unit.execution.backend, value_part, values);
      kernels::scatter_add(unit.execution.backend, indices, values, aggregate);
    }
    const float ranks = static_cast<float>(unit.contributors());
    for (float& x : aggregate) x /= ranks;
    return std::nullopt;
  }

  Transmitted transmitted(const UnitContext&, std::span<const float>, const Selection& selection,
                          std::span<float>) const override {
    return Transmitted::entries(selection.indices, selection.values);
  }

  std::optional<std::uint64_t> wire_bytes(const UnitContext& unit, int) const override {
    return payload_bytes(unit);
  }

 private:
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
};

struct TopKOptions {
  double ratio = 0.01;
  std::optional<std::int64_t> k;
  std::string value_type = "fp32";
  std::int64_t bins = 4;
  double range = 6.0;
  std::string index_width = "int32";
};

const OptionsSchema<TopKOptions>& topk_schema() {
  static const auto schema = [] {
    OptionsSchema<TopKOptions> s;
    s.field("ratio", &TopKOptions::ratio, "fraction kept per unit: k = max(1, floor(ratio n))", {.min = 1e-9, .max = 1.0})
        .field("k", &TopKOptions::k, "entries kept per unit; replaces ratio when set", {.min = 1.0});
    value_encoding_fields(s);
    index_encoding_fields(s);
    return s;
  }();
  return schema;
}

}  // namespace

CompressorInfo topk_compressor() {
  return {.name = "topk",
          .description = "the k largest-magnitude entries with their indices (gathered); duplicates accumulate",
          .parameters = topk_schema().keys(),
          .error_feedback_by_default = true,
          .create = [](const CompressorParameters& p) -> std::unique_ptr<Compressor> {
            const TopKOptions o = topk_schema().read(p);
            return std::make_unique<TopK>(o.ratio, o.k, ValueEncoding::parse(o.value_type, o.bins, o.range),
                                          IndexEncoding::parse(o.index_width));
          }};
}

}  // namespace lowcomm::builtin
