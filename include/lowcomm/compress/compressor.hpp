#pragma once
// The Compressor plug-in interface. A compressor turns one unit of local gradient into messages
// the library exchanges, and the exchanged results into the aggregated gradient: the mean over
// ranks, as the compression reconstructs it. It declares how its payloads combine, hands what
// its later calls of a step need to itself through a scratch value of its own type
// (CompressorWith<Scratch> below), keeps state that outlives a step (warm-start factors) keyed by
// the unit id, and reports what it transmitted (transmitted.hpp) so that error feedback (a
// reusable wrapper, error_feedback.hpp) works for every compressor. This header with registry.hpp
// (the registration) is all a plug-in includes; docs/plugins.md walks through writing one.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lowcomm/compress/message.hpp"
#include "lowcomm/compress/transmitted.hpp"
#include "lowcomm/compress/unit.hpp"
#include "lowcomm/compress/unit_scratch.hpp"
#include "lowcomm/core/state_dict.hpp"

namespace lowcomm {

class FusedCorrection;
class FusedErrorFeedback;

// How payloads combine; the library checks every message against it.
enum class Aggregation : std::uint8_t {
  Summable,    // one round of Sum (an all-reduce suffices)
  Gathered,    // one round of GatherBytes (all-gather, sizes may vary)
  MultiRound,  // several rounds of either kind (PowerSGD: two all-reduces)
  Merged,      // one round of Merge: payloads combined pairwise (merge()) up a butterfly of pair
               // exchanges, so each rank sends O(log W) payloads (gTop-k's tree)
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

  // One unit's step, in this order: encode, then decode once per round until it returns nullopt,
  // then (for error feedback) transmitted. The library holds one UnitScratch per unit and hands
  // the same one to all of them; a compressor derived from CompressorWith<Scratch> sees it as its
  // own Scratch type, which encode fills and the others read.

  // Round 0: the message for this rank's gradient of one unit. `gradient` stays valid and
  // unchanged until the unit's last decode of the step returns, so encode may keep the span in
  // the scratch for a later round (PowerSGD multiplies it again in round 1) instead of a copy.
  virtual Message encode(const UnitContext& unit, std::span<const float> gradient, UnitScratch& scratch) = 0;

  // The result of round `round`'s exchange. Returns the next round's message, or writes the
  // aggregated gradient of the unit into `aggregate` and returns nullopt. `aggregate` holds
  // unit.numel() values whose contents on entry are unspecified: decode writes every one.
  // `received` may come from other ranks: a malformed payload must throw lowcomm::Error, never
  // read or write out of bounds.
  virtual std::optional<Message> decode(const UnitContext& unit, int round, const Received& received,
                                        UnitScratch& scratch, std::span<float> aggregate) = 0;

  // After the unit's last decode: the part of this rank's `input` (the gradient given to encode)
  // that the exchange carried, in gradient units (top-k: the selected entries; quantisation: the
  // dequantised values; PowerSGD, as its paper code: the aggregated reconstruction), in the form
  // the compressor has it (transmitted.hpp): written into every element of `out` (unit.numel()
  // values) and Transmitted::dense() returned, or entries or "the aggregate" returned and `out`
  // left alone. Error feedback keeps input − transmitted for the next step.
  virtual Transmitted transmitted(const UnitContext& unit, std::span<const float> input, const UnitScratch& scratch,
                                  std::span<float> out) const = 0;

  // Merged aggregation only: the payload that stands for both `mine` and `theirs` (each one rank's,
  // or already a merge of several ranks'), of the same size. It must not depend on the order of
  // the two (both ranks of a pair compute it), and `theirs` comes from another rank: a malformed
  // one must throw lowcomm::Error. Default: throws (the compressor does not merge).
  virtual std::vector<std::byte> merge(const UnitContext& unit, std::span<const std::byte> mine,
                                       std::span<const std::byte> theirs) const;

  // The exact payload size of round `round` for this unit when it is fixed (top-k with a fixed k,
  // PowerSGD's factors); the library checks every message against it, and gathers such payloads
  // without a size header. nullopt: the size varies.
  virtual std::optional<std::uint64_t> wire_bytes(const UnitContext& unit, int round) const = 0;

  // State that must survive a checkpoint (warm-start factors, ...), under keys that begin with
  // `prefix`. What the UnitScratch carries within a step is not state.
  virtual void save_state(StateDict& state, std::string_view prefix) const;
  virtual void load_state(const StateDict& state, std::string_view prefix);

  // Optional: error feedback fused into this compressor's passes (fused_error_feedback.hpp), or
  // nullptr (the default), and ErrorFeedback keeps the residual in passes of its own.
  virtual FusedErrorFeedback* fused_error_feedback() { return nullptr; }

  // Optional: error feedback's correction formed in this compressor's first pass
  // (fused_correction.hpp), or nullptr (the default), and ErrorFeedback forms it in a pass of its own.
  virtual FusedCorrection* fused_correction() { return nullptr; }
};

// The base a compressor derives from: `Scratch` is the value its encode leaves for the decode
// rounds and transmitted of the same unit and step (the entries it selected, the factor of round
// 0, ...), default-constructible. Each unit has its own, which outlives the step: encode finds
// last step's value (or a new one) and may reuse its buffers; decode and transmitted read what
// encode wrote. So no compressor keeps hidden per-unit maps, and the three calls share one type.
template <class Scratch>
class CompressorWith : public Compressor {
 public:
  virtual Message encode(const UnitContext& unit, std::span<const float> gradient, Scratch& scratch) = 0;
  virtual std::optional<Message> decode(const UnitContext& unit, int round, const Received& received,
                                        Scratch& scratch, std::span<float> aggregate) = 0;
  virtual Transmitted transmitted(const UnitContext& unit, std::span<const float> input, const Scratch& scratch,
                                  std::span<float> out) const = 0;

  Message encode(const UnitContext& unit, std::span<const float> gradient, UnitScratch& scratch) final {
    return encode(unit, gradient, scratch.get_or_create<Scratch>());
  }
  std::optional<Message> decode(const UnitContext& unit, int round, const Received& received, UnitScratch& scratch,
                                std::span<float> aggregate) final {
    return decode(unit, round, received, scratch.get<Scratch>(), aggregate);
  }
  Transmitted transmitted(const UnitContext& unit, std::span<const float> input, const UnitScratch& scratch,
                          std::span<float> out) const final {
    return transmitted(unit, input, scratch.get<Scratch>(), out);
  }
};

// For a compressor whose calls need nothing from each other (a dense exchange).
struct NoScratch {};

}  // namespace lowcomm
