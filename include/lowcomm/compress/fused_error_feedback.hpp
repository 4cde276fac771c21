#pragma once
// An optional part of the Compressor interface: error feedback folded into the compressor's own
// pass over the unit, for a compressor whose transmitted part is a function of small factors it
// keeps (PowerSGD: the reconstruction P̂·Q̄ᵀ). A compressor offers it by returning itself from
// Compressor::fused_error_feedback(). ErrorFeedback (error_feedback.hpp) then keeps, after a step,
// the corrected input itself instead of the residual corrected − transmitted, and the next step's
// encode forms
//     corrected ← decay·(corrected − transmitted) + gradient
// in the same pass as its first product. That saves plain error feedback's two passes of its own
// over the unit (the residual's subtraction, then the decayed sum), and gives the same bits: the
// compressor computes each element with the operations, in the order, that ErrorFeedback and its
// own unfused encode would use.
#include <cstdint>
#include <span>

#include "lowcomm/compress/message.hpp"
#include "lowcomm/compress/unit.hpp"
#include "lowcomm/compress/unit_scratch.hpp"

namespace lowcomm {

class FusedErrorFeedback {
 public:
  virtual ~FusedErrorFeedback() = default;

  // After the unit's last decode of a step: whether the compressor kept what rebuilds this step's
  // transmitted part, so that the residual may stay deferred until the unit's next encode (or a
  // call of subtract_transmitted).
  virtual bool keeps_transmitted(const UnitContext& unit) const = 0;

  // The step after one whose residual stayed deferred: `corrected` holds the last step's
  // corrected input on entry and this step's, decay·(corrected − transmitted) + gradient, on
  // return; the message is Compressor::encode's for it, and the decode rounds and `transmitted`
  // follow as usual. `corrected` stays valid and unchanged until the unit's last decode returns.
  virtual Message encode_corrected(const UnitContext& unit, float decay, std::span<const float> gradient,
                                   std::span<float> corrected, UnitScratch& scratch) = 0;

  // The residual the deferred form stands for, corrected − transmitted (of the last step of unit
  // `unit_id`, `corrected` its input), into `residual`: for a checkpoint, or a reader of it.
  virtual void subtract_transmitted(std::uint32_t unit_id, std::span<const float> corrected,
                                    std::span<float> residual) const = 0;
};

}  // namespace lowcomm
