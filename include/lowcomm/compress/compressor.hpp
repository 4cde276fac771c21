#pragma once
// The Compressor plug-in interface. A compressor turns one unit of local gradient into messages
// the library exchanges, and the exchanged results into the aggregated gradient: the mean over
// ranks, as the compression reconstructs it. It declares how its payloads combine, keeps its own
// state keyed by the unit id, and reports what it transmitted so that error feedback (a reusable
// wrapper, error_feedback.hpp) works for every compressor. docs/plugins.md walks through writing
// one.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "lowcomm/compress/message.hpp"
#include "lowcomm/compress/state_dict.hpp"
#include "lowcomm/compress/unit.hpp"

namespace lowcomm {

// How payloads combine; the library checks every message against it.
enum class Aggregation : std::uint8_t {
  Summable,    // one round of Sum (an all-reduce suffices)
  Gathered,    // one round of GatherBytes (all-gather, sizes may vary)
  MultiRound,  // several rounds of either kind (PowerSGD: two all-reduces)
};

// What a unit is.
enum class Granularity : std::uint8_t {
  PerTensor,  // every tensor compressed on its own
  Bucket,     // consecutive tensors fused into flat buckets up to a byte cap
  Global,     // the whole model as one flat vector (selection across tensors)
};

std::string_view to_string(Aggregation aggregation);
std::string_view to_string(Granularity granularity);
Granularity parse_granularity(std::string_view name);  // "tensor", "bucket", "global"

class Compressor {
 public:
  virtual ~Compressor() = default;

  virtual Aggregation aggregation() const = 0;

  // Whether units of this granularity make sense (e.g. PowerSGD and DCT blocks need each
  // tensor's own shape, so they only accept PerTensor).
  virtual bool supports(Granularity granularity) const = 0;

  // Round 0: the message for this rank's gradient of one unit.
  virtual Message encode(const UnitContext& unit, std::span<const float> gradient) = 0;

  // The result of round `round`'s exchange. Returns the next round's message, or writes the
  // aggregated gradient of the unit into `aggregate` (unit.numel() values) and returns nullopt.
  // `received` may come from other ranks: a malformed payload must throw lowcomm::Error, never
  // read or write out of bounds.
  virtual std::optional<Message> decode(const UnitContext& unit, int round, const Received& received,
                                        std::span<float> aggregate) = 0;

  // After the unit's last decode: the part of this rank's `input` (the gradient given to encode)
  // that the exchange carried, in gradient units (top-k: the selected entries, zeros elsewhere;
  // quantisation: the dequantised values; PowerSGD, as its paper code: the aggregated
  // reconstruction). Error feedback keeps input − transmitted for the next step.
  virtual void transmitted(const UnitContext& unit, std::span<const float> input,
                           std::span<float> out) const = 0;

  // The exact payload size of round `round` for this unit when it is fixed (top-k with a fixed k,
  // PowerSGD's factors); the library checks every message against it, and gathers such payloads
  // without a size header. nullopt: the size varies.
  virtual std::optional<std::uint64_t> wire_bytes(const UnitContext& unit, int round) const = 0;

  // State that must survive a checkpoint (warm-start factors, ...), under keys that begin with
  // `prefix`. Scratch kept between encode and decode of one step is not state.
  virtual void save_state(StateDict& state, std::string_view prefix) const;
  virtual void load_state(const StateDict& state, std::string_view prefix);
};

}  // namespace lowcomm
