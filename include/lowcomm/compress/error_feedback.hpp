#pragma once
// Error feedback for any compressor: what the exchange did not carry of this rank's input is
// kept (per unit, in gradient units) and added to the next step's gradient before compressing,
// so nothing is lost, only delayed:
//     corrected ← gradient + residual;  compress(corrected);  residual ← corrected − transmitted
// where `transmitted` is what the wrapped compressor reports (Compressor::transmitted), in
// whichever form it has it (transmitted.hpp): dense, entries, or the aggregate itself.
//
// With a decay β < 1 the residual fades: corrected ← gradient + β·residual. Fed η-scaled gradients
// that is exactly DeMo's momentum (REFERENCE.md §1: δ ← β·δ + η·g, then δ ← δ − transmitted), so
// the DeMo strategy keeps its momentum here, for every transport and granularity.
//
// The residuals live in the memory of the unit's backend (UnitContext::execution; on the GPU for
// Cuda, kernels/memory.hpp) and the sums run there (kernels/elementwise.hpp; scatter_add for the
// sparse correction of a compressor whose transmitted is entries).
//
// Where the wrapped compressor offers it (Compressor::fused_error_feedback(): PowerSGD), a unit's
// residual is kept deferred, as the corrected input whose transmitted part the compressor's next
// encode subtracts in its own pass (fused_error_feedback.hpp): the same bits, two passes fewer.
// residual() and checkpoints see it subtracted. Where it offers only the correction
// (Compressor::fused_correction(): top-k, quantize), its encode forms gradient + β·residual in its
// own first pass (fused_correction.hpp): the same bits, one pass fewer.
#include <map>
#include <memory>
#include <vector>

#include "lowcomm/compress/compressor.hpp"
#include "lowcomm/compress/fused_correction.hpp"
#include "lowcomm/compress/fused_error_feedback.hpp"
#include "lowcomm/kernels/memory.hpp"

namespace lowcomm {

class ErrorFeedback final : public Compressor {
 public:
  enum class Fusion : std::uint8_t {
    WhereOffered,  // fuse what the wrapped compressor offers: the deferred residual, or the correction
    Off,           // the residual itself, in passes of its own: for a caller that reads residual() during a step
  };

  // decay in [0, 1]; 1 is plain error feedback.
  explicit ErrorFeedback(std::unique_ptr<Compressor> inner, float decay = 1.0f,
                         Fusion fusion = Fusion::WhereOffered);

  Aggregation aggregation() const override { return inner_->aggregation(); }
  bool supports(Granularity granularity) const override { return inner_->supports(granularity); }
  Message encode(const UnitContext& unit, std::span<const float> gradient, UnitScratch& scratch) override;
  std::optional<Message> decode(const UnitContext& unit, int round, const Received& received,
                                UnitScratch& scratch, std::span<float> aggregate) override;
  Transmitted transmitted(const UnitContext& unit, std::span<const float> input, const UnitScratch& scratch,
                          std::span<float> out) const override;
  std::optional<std::uint64_t> wire_bytes(const UnitContext& unit, int round) const override;
  std::vector<std::byte> merge(const UnitContext& unit, std::span<const std::byte> mine,
                               std::span<const std::byte> theirs) const override {
    return inner_->merge(unit, mine, theirs);
  }
  void save_state(StateDict& state, std::string_view prefix) const override;
  void load_state(const StateDict& state, std::string_view prefix) override;

  const Compressor& inner() const { return *inner_; }
  // The residual of a unit (empty before its first step), between steps: from a unit's encode to
  // its last decode a deferred residual is being replaced, and this throws. A deferred residual is
  // subtracted into a copy, valid until the next call.
  std::span<const float> residual(std::uint32_t unit_id) const;

 private:
  // A unit's step: the corrected gradient the inner compressor encoded, and the inner's scratch.
  struct Corrected {
    kernels::FloatBuffer values;  // gradient + (decayed) residual
    UnitScratch inner;
    std::vector<float> negated;  // −values of the inner's transmitted entries, when it has them
  };
  // What a unit carries to its next step: state.
  struct Kept {
    enum class Form : std::uint8_t {
      Residual,   // values: the residual
      Deferred,   // values: last step's corrected input; the inner subtracts what it transmitted
      Replacing,  // a step that consumed the deferred form is in flight; values: nothing yet
    };
    kernels::FloatBuffer values;
    Form form = Form::Residual;
  };
  std::unique_ptr<Compressor> inner_;
  float decay_;
  FusedErrorFeedback* fused_;  // the inner's fused error feedback, or nullptr (none, or Fusion::Off)
  FusedCorrection* correcting_;  // the inner's fused correction, or nullptr (none, or Fusion::Off)
  std::map<std::uint32_t, Kept> kept_;
  mutable std::map<std::uint32_t, std::vector<float>> subtracted_;  // residual()'s copies of deferred ones
  // What load_state read, moved into kept_ (in the backend's memory, which only a unit's
  // context names) by the unit's next encode.
  std::map<std::uint32_t, std::vector<float>> restored_;
};

}  // namespace lowcomm
