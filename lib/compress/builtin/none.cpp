// `none`: the dense all-reduce average, i.e. synchronous data-parallel training, the baseline
// every compressor is compared with. Values travel as fp32, or as fp16/bf16 summed in that type
// (half the bytes, as mixed-precision DDP communicates).
#include <fmt/format.h>

#include <algorithm>

#include "builtins.hpp"
#include "lowcomm/error.hpp"
#include "lowcomm/kernels/float16.hpp"

namespace lowcomm::builtin {

namespace {

using kernels::ValueType;

class NoCompression final : public CompressorWith<NoScratch> {
 public:
  explicit NoCompression(ValueType wire) : wire_(wire) {}

  Aggregation aggregation() const override { return Aggregation::Summable; }
  bool supports(Granularity) const override { return true; }

  Message encode(const UnitContext&, std::span<const float> gradient, NoScratch&) override {
    return Message::sum_view(gradient, wire_);  // valid until the last decode (compressor.hpp)
  }

  std::optional<Message> decode(const UnitContext& unit, int, const Received& received, NoScratch&,
                                std::span<float> aggregate) override {
    if (received.sum.size() != aggregate.size()) {
      throw Error(fmt::format("none: unit '{}' received {} values, expected {}", unit.name, received.sum.size(),
                              aggregate.size()));
    }
    const float ranks = static_cast<float>(unit.contributors());
    std::transform(received.sum.begin(), received.sum.end(), aggregate.begin(),
                   [ranks](float sum) { return sum / ranks; });
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

  std::optional<std::uint64_t> wire_bytes(const UnitContext& unit, int) const override {
    return static_cast<std::uint64_t>(unit.numel()) * kernels::value_bytes(wire_);
  }

 private:
  ValueType wire_;
};

struct NoneOptions {
  std::string value_type = "fp32";
};

const OptionsSchema<NoneOptions>& none_schema() {
  static const auto schema = OptionsSchema<NoneOptions>().field(
      "value_type", &NoneOptions::value_type, "values on the wire, summed in that type",
      {.choices = {"fp32", "fp16", "bf16"}});
  return schema;
}

}  // namespace

CompressorInfo none_compressor() {
  return {.name = "none",
          .description = "no compression: dense all-reduce of the gradient (fp32, fp16 or bf16), averaged",
          .parameters = none_schema().keys(),
          .error_feedback_by_default = false,
          .create = [](const CompressorParameters& p) -> std::unique_ptr<Compressor> {
            const NoneOptions options = none_schema().read(p);
            const ValueType wire = options.value_type == "fp16"   ? ValueType::F16
                                   : options.value_type == "bf16" ? ValueType::BF16
                                                                  : ValueType::F32;
            return std::make_unique<NoCompression>(wire);
          }};
}

}  // namespace lowcomm::builtin
