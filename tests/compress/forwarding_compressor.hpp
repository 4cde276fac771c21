#pragma once
// Test compressors that wrap another and change one thing. ForwardingCompressor forwards every
// call a compressor must implement and the state calls, but not the optional fused error feedback
// (error feedback around it runs unfused).
#include <memory>
#include <optional>

#include "lowcomm/compress/compressor.hpp"

namespace lowcomm {

class ForwardingCompressor : public Compressor {
 public:
  explicit ForwardingCompressor(std::unique_ptr<Compressor> inner) : inner_(std::move(inner)) {}
  Aggregation aggregation() const override { return inner_->aggregation(); }
  bool supports(Granularity g) const override { return inner_->supports(g); }
  Message encode(const UnitContext& unit, std::span<const float> gradient, UnitScratch& scratch) override {
    return inner_->encode(unit, gradient, scratch);
  }
  std::optional<Message> decode(const UnitContext& unit, int round, const Received& received, UnitScratch& scratch,
                                std::span<float> aggregate) override {
    return inner_->decode(unit, round, received, scratch, aggregate);
  }
  Transmitted transmitted(const UnitContext& unit, std::span<const float> input, const UnitScratch& scratch,
                          std::span<float> out) const override {
    return inner_->transmitted(unit, input, scratch, out);
  }
  std::optional<std::uint64_t> wire_bytes(const UnitContext& unit, int round) const override {
    return inner_->wire_bytes(unit, round);
  }
  void save_state(StateDict& state, std::string_view prefix) const override { inner_->save_state(state, prefix); }
  void load_state(const StateDict& state, std::string_view prefix) override { inner_->load_state(state, prefix); }

 private:
  std::unique_ptr<Compressor> inner_;
};

// One whose payload sizes are not declared (wire_bytes is nullopt), as a plug-in whose sizes
// depend on the data would not: the library frames its payloads with a size table and
// all-gathers the sizes first.
class UndeclaredSizes final : public ForwardingCompressor {
 public:
  using ForwardingCompressor::ForwardingCompressor;
  std::optional<std::uint64_t> wire_bytes(const UnitContext&, int) const override { return std::nullopt; }
};

}  // namespace lowcomm
