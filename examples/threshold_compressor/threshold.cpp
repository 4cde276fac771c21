// `threshold`: send every entry whose magnitude is at least τ (Strom, 2015), with its index.
// Unlike top-k the number of entries differs from rank to rank and from step to step, so the
// payloads are gathered with their sizes. The worked example of docs/plugins.md.
#include <lowcomm/lowcomm.hpp>

#include <cmath>
#include <cstring>

namespace {

using lowcomm::Aggregation;
using lowcomm::Compressor;
using lowcomm::Message;
using lowcomm::Received;
using lowcomm::Transmitted;
using lowcomm::UnitContext;

// One entry on the wire: 4-byte index, 4-byte value.
struct Entry {
  std::uint32_t index;
  float value;
};

// What encode leaves for the unit's decode and transmitted (the library keeps one per unit, so
// last step's buffer is reused).
struct Sent {
  std::vector<Entry> entries;
};

class Threshold final : public lowcomm::CompressorWith<Sent> {
 public:
  explicit Threshold(float tau) : tau_(tau) {}

  // Payloads are combined by gathering them (all-gather, sizes may differ between ranks).
  Aggregation aggregation() const override { return Aggregation::Gathered; }
  // Works on any flat vector: a tensor, a bucket, or the whole model.
  bool supports(lowcomm::Granularity) const override { return true; }

  Message encode(const UnitContext&, std::span<const float> gradient, Sent& scratch) override {
    std::vector<Entry>& sent = scratch.entries;
    sent.clear();
    for (std::size_t i = 0; i < gradient.size(); ++i) {
      if (std::abs(gradient[i]) >= tau_) sent.push_back({static_cast<std::uint32_t>(i), gradient[i]});
    }
    std::vector<std::byte> payload(sent.size() * sizeof(Entry));
    std::memcpy(payload.data(), sent.data(), payload.size());
    return Message::gather(std::move(payload));
  }

  std::optional<Message> decode(const UnitContext& unit, int /*round*/, const Received& received,
                                Sent& /*scratch*/, std::span<float> aggregate) override {
    std::fill(aggregate.begin(), aggregate.end(), 0.0f);  // it arrives holding anything
    for (const std::span<const std::byte> payload : received.gathered) {
      // Payloads come from other ranks: check before trusting them.
      if (payload.size() % sizeof(Entry) != 0) throw lowcomm::Error("threshold: truncated payload");
      for (std::size_t at = 0; at < payload.size(); at += sizeof(Entry)) {
        Entry entry;
        std::memcpy(&entry, payload.data() + at, sizeof(Entry));
        if (entry.index >= aggregate.size()) throw lowcomm::Error("threshold: index out of range");
        aggregate[entry.index] += entry.value;
      }
    }
    for (float& x : aggregate) x /= static_cast<float>(unit.contributors());
    return std::nullopt;  // done after one round
  }

  // What this rank's entries contributed, written out in full: error feedback keeps the rest for
  // the next step.
  Transmitted transmitted(const UnitContext&, std::span<const float>, const Sent& scratch,
                          std::span<float> out) const override {
    std::fill(out.begin(), out.end(), 0.0f);
    for (const Entry& entry : scratch.entries) out[entry.index] = entry.value;
    return Transmitted::dense();
  }

  // The size varies, so the library sends a size table with the payloads.
  std::optional<std::uint64_t> wire_bytes(const UnitContext&, int) const override { return std::nullopt; }

 private:
  float tau_;
};

// Registered when the library is loaded (`lowcomm --plugin liblowcomm_threshold.so ...`): from then
// on `compressor.name = "threshold"` and `compressor.threshold.tau` work like a built-in's keys.
const lowcomm::RegisterCompressor registration{{
    .name = "threshold",
    .description = "entries with |value| >= tau, gathered with their indices (plug-in example)",
    .parameters = {{.path = "tau", .type = lowcomm::ValueType::Float, .default_value = 0.5,
                    .description = "magnitude threshold", .min = 0.0}},
    .error_feedback_by_default = true,
    .create = [](const lowcomm::CompressorParameters& p) -> std::unique_ptr<Compressor> {
      return std::make_unique<Threshold>(static_cast<float>(p.get_double("tau")));
    },
}};

}  // namespace
