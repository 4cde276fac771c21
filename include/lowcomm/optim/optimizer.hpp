#pragma once
// A local optimizer: applies one step to a list of parameter tensors given their (already
// aggregated) gradients and the learning rate of that step. Strategies own the schedule, the
// clipping and the aggregation; an optimizer only keeps per-tensor state (momenta, Adam moments)
// and its step count.
//
// State is indexed by the position of a tensor in the list, so callers pass the tensors in the
// same order every step. It is created on the first step, for every tensor at once, in the memory
// of the backend the optimizer was made for (kernels/memory.hpp: on the GPU for Cuda, where the
// built-in optimizers' updates run too, kernels/optimizer_updates.hpp), and saved / restored
// through a StateDict: a restored optimizer continues bitwise identically, on any backend.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "lowcomm/core/state_dict.hpp"
#include "lowcomm/core/tensor.hpp"
#include "lowcomm/kernels/memory.hpp"

namespace lowcomm {

class Optimizer {
 public:
  virtual ~Optimizer() = default;

  virtual std::string_view name() const = 0;

  // params[i] ← update(params[i], grads[i], lr). Throws lowcomm::Error, modifying nothing, when lr
  // is negative or not finite, when the number of tensors differs from the first step's, or when
  // a gradient's size differs from its parameter's or a parameter's from its state (the message
  // names the tensor index).
  virtual void step(std::span<const std::span<float>> params,
                    std::span<const std::span<const float>> grads, double lr) = 0;

  // Optimizer steps taken so far (0 before the first).
  virtual std::int64_t steps() const = 0;

  // Keys are `prefix` followed by a relative name: "tensors", "steps", "<buffer>/<index>". The
  // prefix is used as given, so pass e.g. "optimizer/" to keep a separator. load_state replaces
  // all state and throws lowcomm::Error naming the key when one is missing or inconsistent.
  virtual void save_state(StateDict& state, std::string_view prefix) const = 0;
  virtual void load_state(const StateDict& state, std::string_view prefix) = 0;

  // One of the optimizer's state buffers by its name in the checkpoint ("exp_avg", "exp_avg_sq"),
  // a span per tensor in step() order, for a strategy that averages optimizer state across ranks
  // (DES-LOC). Empty before the first step and for a buffer the optimizer does not keep (the
  // default: none).
  virtual std::vector<std::span<float>> state_views(std::string_view buffer) {
    (void)buffer;
    return {};
  }

 protected:
  using Sizes = std::vector<std::size_t>;
  // One state buffer (a momentum, a moment) per tensor, all of them back to back in one
  // allocation of the backend's memory, so that a run of tensors is one span too.
  struct Buffers {
    kernels::FloatBuffer flat;
    std::vector<std::span<float>> views;  // one per tensor, into flat
    std::span<float> operator[](std::size_t i) const { return views[i]; }
    // Tensors [first, last) together.
    std::span<float> run(std::size_t first, std::size_t last) const {
      return joined(std::span<const std::span<float>>(views), first, last);
    }
  };
  // The runs of tensors [first, last) whose parameters and gradients each lie back to back (a
  // model's flat buffers are one run), for an update to take in one call: one kernel launch on a
  // GPU rather than one per tensor. The state's buffers are always back to back.
  static std::vector<std::pair<std::size_t, std::size_t>> update_runs(std::span<const std::span<float>> params,
                                                                      std::span<const std::span<const float>> grads);

  // The checks every step() starts with; `sizes` are the tensor sizes of the first step, empty
  // before it (then any sizes are accepted).
  static void check_step(std::string_view optimizer, std::span<const std::span<float>> params,
                         std::span<const std::span<const float>> grads, double lr,
                         const Sizes& sizes);
  static Sizes sizes_of(std::span<const std::span<float>> params);
  // One zero-filled buffer per size, in `backend`'s memory.
  static Buffers zeros(const Sizes& sizes, kernels::Backend backend);

  // "steps", "tensors" and "size/<i>", then one "<name>/<i>" per buffer.
  static void save_common(StateDict& state, std::string_view prefix, std::int64_t steps,
                          const Sizes& sizes);
  static void load_common(const StateDict& state, std::string_view prefix, std::int64_t& steps,
                          Sizes& sizes);
  static void save_buffers(StateDict& state, std::string_view prefix, std::string_view name,
                           const Buffers& buffers);
  static Buffers load_buffers(const StateDict& state, std::string_view prefix,
                              std::string_view name, const Sizes& sizes, kernels::Backend backend);
};

}  // namespace lowcomm
