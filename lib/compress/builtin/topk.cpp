// `topk`: the k entries of largest magnitude (REFERENCE.md §2), with their indices. Payloads are
// gathered; duplicates across ranks accumulate, and the sum is divided by W. Ties go to the lower
// index, so runs are deterministic. Error feedback (on by default) keeps the rest. The values
// travel as fp32, fp16, bf16, or on a codebook of `bins` codes (SparseLoCo's quantiser,
// compress/sparseloco_wire.hpp: ceil(log2 bins) bits a value, then the shift and the bins' decoded
// values as fp32; MuLoCo's 2-bit top-k at bins = 4).
#include <fmt/format.h>

#include <algorithm>
#include <bit>

#include "builtins.hpp"
#include "lowcomm/compress/sparseloco_wire.hpp"
#include "lowcomm/error.hpp"
#include "lowcomm/kernels/float16.hpp"
#include "lowcomm/kernels/pack.hpp"
#include "lowcomm/kernels/scatter.hpp"
#include "lowcomm/kernels/topk.hpp"

namespace lowcomm::builtin {

namespace {

using kernels::IndexWidth;
using WireType = kernels::ValueType;

struct Selection {
  std::vector<std::int64_t> indices;
  std::vector<float> values;  // as received (rounded to the wire's value type), −0 made +0
};

class TopK final : public CompressorWith<Selection> {
 public:
  // codebook_bins > 0: the values on a codebook of that many codes instead of `values`.
  TopK(double ratio, std::optional<std::int64_t> k, WireType values, int codebook_bins, bool smallest_indices)
      : ratio_(ratio), k_(k), value_type_(values), codebook_bins_(codebook_bins), smallest_indices_(smallest_indices) {}

  Aggregation aggregation() const override { return Aggregation::Gathered; }
  bool supports(Granularity) const override { return true; }

  Message encode(const UnitContext& unit, std::span<const float> gradient, Selection& selection) override {
    const auto k = static_cast<std::size_t>(count(unit.numel()));
    selection.indices.resize(k);
    selection.values.resize(k);
    kernels::topk_global(unit.execution.backend, gradient, static_cast<std::int64_t>(k), selection.indices, selection.values);
    // What receivers will see: the values after the trip through the wire's value type.
    std::vector<std::byte> payload(payload_bytes(unit));
    const std::size_t index_bytes = kernels::packed_index_bytes(k, index_width(unit));
    kernels::pack_indices(unit.execution.backend, selection.indices, index_width(unit),
                          std::span(payload).first(index_bytes));
    const std::span<std::byte> value_bytes = std::span(payload).subspan(index_bytes);
    if (codebook_bins_ > 0) {
      const sparseloco::Codebook book = sparseloco::quantize(selection.values, codebook_bins_, 6.0);
      sparseloco::write_codebook(book, code_bits(), value_bytes);
      for (std::size_t i = 0; i < k; ++i) selection.values[i] = book.decoded(book.codes[i]);
    } else {
      kernels::encode_values(unit.execution.backend, selection.values, value_type_, value_bytes);
      kernels::decode_values(unit.execution.backend, std::span<const std::byte>(value_bytes), value_type_,
                             selection.values);
    }
    for (float& v : selection.values) v = 0.0f + v;  // what the dense form, 0 + v at each index, holds
    return Message::gather(std::move(payload));
  }

  std::optional<Message> decode(const UnitContext& unit, int, const Received& received, Selection&,
                                std::span<float> aggregate) override {
    const auto k = static_cast<std::size_t>(count(unit.numel()));
    const std::size_t index_bytes = kernels::packed_index_bytes(k, index_width(unit));
    std::vector<std::int64_t> indices(k);
    std::vector<float> values(k);
    std::fill(aggregate.begin(), aggregate.end(), 0.0f);
    for (std::size_t w = 0; w < received.gathered.size(); ++w) {
      const std::span<const std::byte> payload = received.gathered[w];
      if (payload.size() != payload_bytes(unit)) {
        throw Error(fmt::format("topk: rank {} sent {} bytes for unit '{}', expected {}", received.sender(w), payload.size(),
                                unit.name, payload_bytes(unit)));
      }
      kernels::unpack_indices(unit.execution.backend, payload.first(index_bytes), index_width(unit),
                              static_cast<std::uint64_t>(unit.numel()), indices);
      read_values(unit, payload.subspan(index_bytes), values);
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
  IndexWidth index_width(const UnitContext& unit) const {
    return smallest_indices_ ? kernels::smallest_index_width(static_cast<std::uint64_t>(unit.numel()))
                             : IndexWidth::U32;
  }
  std::size_t payload_bytes(const UnitContext& unit) const {
    const auto k = static_cast<std::size_t>(count(unit.numel()));
    const std::size_t values = codebook_bins_ > 0 ? sparseloco::codebook_bytes(k, codebook_bins_, code_bits())
                                                  : k * kernels::value_bytes(value_type_);
    return kernels::packed_index_bytes(k, index_width(unit)) + values;
  }
  int code_bits() const { return std::bit_width(static_cast<unsigned>(codebook_bins_ - 1)); }

  // A received payload's values, decoded.
  void read_values(const UnitContext& unit, std::span<const std::byte> bytes, std::span<float> values) const {
    if (codebook_bins_ == 0) {
      kernels::decode_values(unit.execution.backend, bytes, value_type_, values);
      return;
    }
    sparseloco::read_codebook(bytes, codebook_bins_, code_bits(), values);
  }

  double ratio_;
  std::optional<std::int64_t> k_;
  WireType value_type_;
  int codebook_bins_;
  bool smallest_indices_;
};

WireType parse_value_type(const std::string& name) {
  return name == "fp16" ? WireType::F16 : name == "bf16" ? WireType::BF16 : WireType::F32;
}

struct TopKOptions {
  double ratio = 0.01;
  std::optional<std::int64_t> k;
  std::string value_type = "fp32";
  std::int64_t bins = 4;
  std::string index_width = "int32";
};

const OptionsSchema<TopKOptions>& topk_schema() {
  static const auto schema =
      OptionsSchema<TopKOptions>()
          .field("ratio", &TopKOptions::ratio, "fraction kept per unit: k = max(1, floor(ratio n))",
                 {.min = 1e-9, .max = 1.0})
          .field("k", &TopKOptions::k, "entries kept per unit; replaces ratio when set", {.min = 1.0})
          .field("value_type", &TopKOptions::value_type,
                 "values on the wire: fp32, fp16, bf16, or codebook (bins codes: SparseLoCo's quantiser)",
                 {.choices = {"fp32", "fp16", "bf16", "codebook"}})
          .field("bins", &TopKOptions::bins, "value_type = codebook: its codes (4: 2 bits a value)",
                 {.min = 2.0, .max = 256.0})
          .field("index_width", &TopKOptions::index_width,
                 "indices on the wire: int32, or the smallest unsigned type that holds the unit's size (uint8/16/32)",
                 {.choices = {"int32", "smallest"}});
  return schema;
}

}  // namespace

CompressorInfo topk_compressor() {
  return {.name = "topk",
          .description = "the k largest-magnitude entries with their indices (gathered); duplicates accumulate",
          .parameters = topk_schema().keys(),
          .error_feedback_by_default = true,
          .create = [](const CompressorParameters& p) -> std::unique_ptr<Compressor> {
            const TopKOptions options = topk_schema().read(p);
            const int bins = options.value_type == "codebook" ? static_cast<int>(options.bins) : 0;
            return std::make_unique<TopK>(options.ratio, options.k, parse_value_type(options.value_type), bins,
                                          options.index_width == "smallest");
          }};
}

}  // namespace lowcomm::builtin
