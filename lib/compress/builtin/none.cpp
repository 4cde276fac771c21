// `none`: the dense all-reduce average, i.e. synchronous data-parallel training, the baseline
// every compressor is compared with. Values travel as fp32, or as fp16/bf16 summed in that type
// (half the bytes, as mixed-precision DDP communicates).
//
// exchange = "tree": the same sum as a merged exchange (merge_schedule.hpp), the whole vector at
// every merge, so that compressor.merge_groups can make it hierarchical: reduced inside each region
// (or node), the representatives' butterfly across them, broadcast back; only representatives
// send across regions. A merge adds in fp32 and rounds to the wire's type, as the all-reduce does.
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <string_view>

#include "builtins.hpp"
#include "lowcomm/error.hpp"
#include "lowcomm/kernels/float16.hpp"

namespace lowcomm::builtin {

namespace {

using kernels::ValueType;

class NoCompression final : public CompressorWith<NoScratch> {
 public:
  NoCompression(ValueType wire, bool tree) : wire_(wire), tree_(tree) {}

  Aggregation aggregation() const override { return tree_ ? Aggregation::Merged : Aggregation::Summable; }
  bool supports(Granularity) const override { return true; }

  Message encode(const UnitContext& unit, std::span<const float> gradient, NoScratch&) override {
    if (!tree_) return Message::sum_view(gradient, wire_);  // valid until the last decode (compressor.hpp)
    std::vector<std::byte> payload(wire_size(unit));
    kernels::encode_values(unit.execution.backend, gradient, wire_, payload);
    return Message::merge(std::move(payload));
  }

  // The element-wise sum, in fp32, rounded to the wire's type: a + b == b + a, so both ranks of a
  // pair compute the same bytes.
  std::vector<std::byte> merge(const UnitContext& unit, std::span<const std::byte> mine,
                               std::span<const std::byte> theirs) const override {
    std::vector<float> sum = values(unit, mine, "its own merged payload");
    const std::vector<float> other = values(unit, theirs, "its partner's payload");
    std::transform(sum.begin(), sum.end(), other.begin(), sum.begin(), std::plus<>());
    std::vector<std::byte> payload(wire_size(unit));
    kernels::encode_values(unit.execution.backend, sum, wire_, payload);
    return payload;
  }

  std::optional<Message> decode(const UnitContext& unit, int, const Received& received, NoScratch&,
                                std::span<float> aggregate) override {
    std::vector<float> merged;
    std::span<const float> sum = received.sum;
    if (tree_) {
      merged = values(unit, received.merged, "the merged payload");
      sum = merged;
    } else if (sum.size() != aggregate.size()) {
      throw Error(fmt::format("none: unit '{}' received {} values, expected {}", unit.name, sum.size(),
                              aggregate.size()));
    }
    const float ranks = static_cast<float>(unit.contributors());
    std::transform(sum.begin(), sum.end(), aggregate.begin(), [ranks](float total) { return total / ranks; });
    return std::nullopt;
  }

  // The input as it went on the wire (rounded to fp16/bf16 when those travel).
  Transmitted transmitted(const UnitContext& unit, std::span<const float> input, const NoScratch&,
                          std::span<float> out) const override {
    std::vector<std::byte> wire(input.size() * kernels::value_bytes(wire_));
    kernels::encode_values(unit.execution.backend, input, wire_, wire);
    kernels::decode_values(unit.execution.backend, wire, wire_, out);
    return Transmitted::dense();
  }

  std::optional<std::uint64_t> wire_bytes(const UnitContext& unit, int) const override { return wire_size(unit); }

 private:
  std::size_t wire_size(const UnitContext& unit) const {
    return static_cast<std::size_t>(unit.numel()) * kernels::value_bytes(wire_);
  }

  // A merged payload's values; `what` names it in the error a wrong size gets.
  std::vector<float> values(const UnitContext& unit, std::span<const std::byte> payload, std::string_view what) const {
    if (payload.size() != wire_size(unit)) {
      throw Error(fmt::format("none: {} for unit '{}' holds {} bytes, expected {} ({} values of {} bytes)", what,
                              unit.name, payload.size(), wire_size(unit), unit.numel(), kernels::value_bytes(wire_)));
    }
    std::vector<float> out(static_cast<std::size_t>(unit.numel()));
    kernels::decode_values(unit.execution.backend, payload, wire_, out);
    return out;
  }

  ValueType wire_;
  bool tree_;
};

struct NoneOptions {
  std::string value_type = "fp32";
  std::string exchange = "all_reduce";
};

const OptionsSchema<NoneOptions>& none_schema() {
  static const auto schema =
      OptionsSchema<NoneOptions>()
          .field("value_type", &NoneOptions::value_type, "values on the wire, summed in that type",
                 {.choices = {"fp32", "fp16", "bf16"}})
          .field("exchange", &NoneOptions::exchange,
                 "all_reduce (the transport's all-reduce), or tree: the same sum merged pairwise, the whole vector "
                 "at every merge, so that compressor.merge_groups can make it regional",
                 {.choices = {"all_reduce", "tree"}});
  return schema;
}

}  // namespace

CompressorInfo none_compressor() {
  return {.name = "none",
          .description = "no compression: dense all-reduce of the gradient (fp32, fp16 or bf16), averaged; or the "
                         "same sum merged up a tree (regional with compressor.merge_groups)",
          .parameters = none_schema().keys(),
          .wire_examples = {{}, {"value_type=bf16"}, {"value_type=bf16", "exchange=tree"}},
          .error_feedback_by_default = false,
          .create = [](const CompressorParameters& p) -> std::unique_ptr<Compressor> {
            const NoneOptions options = none_schema().read(p);
            const ValueType wire = options.value_type == "fp16"   ? ValueType::F16
                                   : options.value_type == "bf16" ? ValueType::BF16
                                                                  : ValueType::F32;
            return std::make_unique<NoCompression>(wire, options.exchange == "tree");
          }};
}

}  // namespace lowcomm::builtin
