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

  // Optional: called before the forward pass of step `step` (`lr` its learning rate), on the
  // parameters step() will get. A strategy that evaluates the gradient somewhere other than at its
  // parameters (Psyche's lookahead, DeMo's `pipeline = psyche`) moves them here, and step() or
  // cancel_step() moves them back. Every rank calls it with the same step, in order.
  // The training loop calls it every step; a strategy that needs it refuses a step() without it.
  // Default: nothing.
  virtual void before_forward(std::uint64_t step, double lr, std::span<const std::span<float>> params) {
    (void)step, (void)lr, (void)params;
  }

  // Optional, for overlap: the backward pass of step `step` has finished the gradients of
  // `tensors` (indices into the strategy's TensorInfo list; `grads` as step() will get them),
  // so the strategy may start sending them. Called before step(), in the same order on every
  // rank; a caller that never calls it still gets a correct step(). Default: nothing.
  virtual void gradients_ready(std::uint64_t step, std::span<const std::size_t> tensors,
                               std::span<const std::span<const float>> grads) {
    (void)step, (void)tensors, (void)grads;
  }
  // The step whose gradients were handed to gradients_ready (or whose parameters before_forward
  // moved) will not be taken (a NaN or Inf was found): drop whatever it started, leaving the state
  // as before it; what before_forward applied from earlier steps may stay applied (DeMo's psyche
  // pipeline keeps G_{s−2}, as a later step would not apply it again). Collective. Default: nothing.
  virtual void cancel_step() {}

  // Keys begin with `prefix` (e.g. "strategy/"); load_state replaces all state and throws
  // lowcomm::Error naming a missing or inconsistent key.
  virtual void save_state(StateDict& state, std::string_view prefix) const = 0;
  virtual void load_state(const StateDict& state, std::string_view prefix) = 0;
};

}  // namespace lowcomm
