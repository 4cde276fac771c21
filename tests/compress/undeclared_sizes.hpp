#pragma once
// A test compressor: another one whose payload sizes it does not declare (wire_bytes is nullopt),
// as a plug-in whose sizes depend on the data would not. The library then frames its payloads
// with a size table and all-gathers the sizes first.
#include <memory>
#include <optional>

#include "lowcomm/compress/compressor.hpp"

namespace lowcomm {

class UndeclaredSizes final : public Compressor {
 public:
  explicit UndeclaredSizes(std::unique_ptr<Compressor> inner) : inner_(std::move(inner)) {}
  Aggregation aggregation() const override { return inner_->aggregation(); }
  bool supports(Granularity g) const override { return inner_->supports(g); }
  Message encode(const UnitContext& unit, std::span<const float> gradient, UnitScratch& scratch) override {
    return inner_->encode(unit, gradient, scratch);
  }
  std::optional<Message> decode(const UnitContext& unit, int round, const Received& received, UnitScratch& scratch,
                                std::span<float> aggregate) override {
    return inner_->decode(unit, round, received, scratch, aggregate);
  }
  void transmitted(const UnitContext& unit, std::span<const float> input, const UnitScratch& scratch,
                   std::span<float> out) const override {
    inner_->transmitted(unit, input, scratch, out);
  }
  std::optional<std::uint64_t> wire_bytes(const UnitContext&, int) const override { return std::nullopt; }

 private:
  std::unique_ptr<Compressor> inner_;
};

}  // namespace lowcomm
