#pragma once
// A strategy decides how a training step synchronises the ranks (../shared/DESIGN.md, "Layers"):
// data-parallel sends every step's gradient through a compressor, DeMo sends the fast components
// of a local momentum, DiLoCo sends a pseudo-gradient every H local steps. The training loop
// computes each rank's local gradient (clipped, if configured) and the step's learning rate, and
// hands both to Strategy::step, which updates the parameters in place. Compressors and local
// optimizers are pieces a strategy uses, never the other way round, so any compressor can carry
// any strategy's traffic.
//
// Contract:
// - every rank calls step() with the same step number, in order, with the tensors in the same
//   order as the TensorInfo list the strategy was made for; the call is collective;
// - parameters start identical on every rank (the caller initialises them from the shared seed
//   or broadcasts them);
// - all state (momenta, residuals, warm-start factors, anchors, counters) goes through
//   save_state / load_state, and a restored strategy continues bitwise identically.
#include <cstdint>
#include <span>
#include <string_view>

#include "lowcomm/compress/compressed_all_reduce.hpp"
#include "lowcomm/core/state_dict.hpp"

namespace lowcomm {

// What one step did, for the run log. `sync` is all zero on a step that did not communicate
// (DiLoCo's inner steps).
struct StrategyStepReport {
  bool synchronized = false;  // the step exchanged something
  SyncReport sync;            // this rank's collectives, codec time and payload bytes
  double update_s = 0.0;      // local optimizer / update time
};

class Strategy {
 public:
  virtual ~Strategy() = default;

  virtual std::string_view name() const = 0;

  // One training step: `grads` are this rank's local gradients of the loss at `params`, `lr` the
  // schedule's learning rate for this step. Updates `params` in place. Collective.
  virtual StrategyStepReport step(std::uint64_t step, double lr,
                                  std::span<const std::span<float>> params,
                                  std::span<const std::span<const float>> grads) = 0;

  // Keys begin with `prefix` (e.g. "strategy/"); load_state replaces all state and throws
  // lowcomm::Error naming a missing or inconsistent key.
  virtual void save_state(StateDict& state, std::string_view prefix) const = 0;
  virtual void load_state(const StateDict& state, std::string_view prefix) = 0;
};

}  // namespace lowcomm
