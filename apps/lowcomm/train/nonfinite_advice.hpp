#pragma once
// train.nonfinite: what a run that met NaN/Inf tells its user.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "gpt/model.hpp"

namespace lowcomm::cli {

// The first tensor whose gradient holds NaN or Inf, or "" when all are finite.
std::string nonfinite_tensor(const gpt::GptModel& model);

// After a stop on NaN/Inf at `step`, the advice printed to stderr: the checkpoint just written
// holds the parameters that gave it, so the advice points at the newest older one whose loss was
// finite and not diverging (at most twice the lowest loss of this process), if one is kept; else,
// when older ones are kept but all of them diverged already, at the one whose loss was lowest.
// `loss_of_step` holds the mean loss of each step this process ran; `kept_steps` the steps of the
// kept checkpoints.
std::string advice_after_nonfinite(std::int64_t step, const std::map<std::int64_t, double>& loss_of_step,
                                   const std::vector<std::int64_t>& kept_steps, std::int64_t keep_checkpoints,
                                   std::int64_t checkpoint_every);

}  // namespace lowcomm::cli
