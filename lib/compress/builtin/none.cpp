// `none`: the dense all-reduce average, i.e. synchronous data-parallel training. The baseline
// every compressor is compared with.
#include <fmt/format.h>

#include <algorithm>

#include "builtins.hpp"
#include "lowcomm/error.hpp"

namespace lowcomm::builtin {

namespace {

class NoCompression final : public Compressor {
 public:
  Aggregation aggregation() const override { return Aggregation::Summable; }
  bool supports(Granularity) const override { return true; }

  Message encode(const UnitContext&, std::span<const float> gradient) override {
    return Message::sum({gradient.begin(), gradient.end()});
  }

  std::optional<Message> decode(const UnitContext& unit, int, const Received& received,
                                std::span<float> aggregate) override {
    if (received.sum.size() != aggregate.size()) {
      throw Error(fmt::format("none: unit '{}' received {} values, expected {}", unit.name, received.sum.size(),
                              aggregate.size()));
    }
    const float ranks = static_cast<float>(unit.world_size);
    std::transform(received.sum.begin(), received.sum.end(), aggregate.begin(),
                   [ranks](float sum) { return sum / ranks; });
    return std::nullopt;
  }

  void transmitted(const UnitContext&, std::span<const float> input, std::span<float> out) const override {
    std::copy(input.begin(), input.end(), out.begin());
  }

  std::optional<std::uint64_t> wire_bytes(const UnitContext& unit, int) const override {
    return static_cast<std::uint64_t>(unit.numel()) * sizeof(float);
  }
};

}  // namespace

CompressorInfo none_compressor() {
  return {.name = "none",
          .description = "no compression: dense all-reduce of the float32 gradient, averaged",
          .parameters = {},
          .error_feedback_by_default = false,
          .create = [](const CompressorParameters&) { return std::make_unique<NoCompression>(); }};
}

}  // namespace lowcomm::builtin
