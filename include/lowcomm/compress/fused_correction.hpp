#pragma once
// An optional part of the Compressor interface: error feedback's correction formed in the
// compressor's own first pass over the unit, for a compressor whose encode begins by reading every
// element once (top-k's group maxima, quantize's scales). A compressor offers it by returning
// itself from Compressor::fused_correction(). ErrorFeedback (error_feedback.hpp) then does not
// form corrected ← decay·residual + gradient in a pass of its own and hand `corrected` to encode,
// whose first pass reads it again; it calls encode_correcting, which writes `corrected` as that
// first pass reads the residual and the gradient: one pass over the unit fewer, and the same bits
// (each element rounded as elementwise.hpp's scale_add rounds it). The residual follows from
// `corrected` and what was transmitted as before, so residual() and checkpoints are unchanged.
//
// fused_error_feedback.hpp goes further for a compressor whose transmitted part it can rebuild
// from small factors (PowerSGD); where a compressor offers both, that one is used.
#include <span>

#include "lowcomm/compress/message.hpp"
#include "lowcomm/compress/unit.hpp"
#include "lowcomm/compress/unit_scratch.hpp"

namespace lowcomm {

class FusedCorrection {
 public:
  virtual ~FusedCorrection() = default;

  // Whether encode_correcting applies to this unit (its backend has the fused kernel): where not,
  // ErrorFeedback forms the correction itself and calls Compressor::encode.
  virtual bool corrects(const UnitContext& unit) const = 0;

  // Compressor::encode of decay·residual + gradient, which it writes to `corrected` (all three of
  // one size; `corrected` stays valid and unchanged until the unit's last decode returns).
  virtual Message encode_correcting(const UnitContext& unit, float decay, std::span<const float> residual,
                                    std::span<const float> gradient, std::span<float> corrected,
                                    UnitScratch& scratch) = 0;
};

}  // namespace lowcomm
