#pragma once
// Adam as DeepSpeed's 1-bit optimizers run it (1-bit Adam, 0/1 Adam): the moments of the whole
// model as one flat vector, the update without bias correction and with ε outside the root,
// weight decay added to the update:
//     m ← β1·m + (1 − β1)·g ;  v ← β2·v + (1 − β2)·g²      (either alone, as the method says)
//     u ← m / (√v + ε) + λ·x ;  x ← x + (−η)·u
// in DeepSpeed's order of operations, on the host (a CUDA run's buffers are managed memory).
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lowcomm/config/options_schema.hpp"
#include "lowcomm/core/state_dict.hpp"
#include "lowcomm/strategy/registry.hpp"

namespace lowcomm::strategy {

struct FlatAdamOptions {
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.0;
};

// The four keys a 1-bit optimizer's options declare for its Adam, on an options struct with
// members beta1, beta2, eps and weight_decay (config/options_schema.hpp).
template <class Options>
OptionsSchema<Options>& flat_adam_fields(OptionsSchema<Options>& schema) {
  return schema.field("beta1", &Options::beta1, "momentum decay, in [0, 1)", {.min = 0.0, .max = 1.0, .max_exclusive = true})
      .field("beta2", &Options::beta2, "variance decay, in [0, 1)", {.min = 0.0, .max = 1.0, .max_exclusive = true})
      .field("eps", &Options::eps, "added to the square root of the variance", {.min = 0.0})
      .field("weight_decay", &Options::weight_decay, "lambda: the update is m / (sqrt(v) + eps) + lambda * x",
             {.min = 0.0});
}

// Throws ConfigError naming `prefix` when a decay is not below 1.
void check_flat_adam(const FlatAdamOptions& options, std::string_view prefix);

class FlatAdam {
 public:
  FlatAdam(std::size_t n, FlatAdamOptions options);

  // The step's gradient, flattened into the scratch `gradient()` returns (which the caller may
  // then replace by an aggregate). Throws lowcomm::Error when the sizes do not add up to n.
  std::span<float> take_gradient(std::span<const std::span<const float>> grads);
  std::span<float> gradient() { return gradient_; }

  void update_moments(std::span<const float> g);   // m and v
  void update_momentum(std::span<const float> g);  // m only (the variance frozen)
  // x ← x + (−η)·u over the tensors in order; `accumulator` (n entries, or empty) also gets (−η)·u.
  void apply(std::span<const std::span<float>> params, float eta, std::span<float> accumulator = {}) const;

  std::span<float> momentum() { return m_; }
  std::span<const float> variance() const { return v_; }

  // <prefix>exp_avg and exp_avg_sq; load_state throws lowcomm::Error for another model's sizes.
  void save_state(StateDict& state, const std::string& prefix) const;
  void load_state(const StateDict& state, const std::string& prefix);

 private:
  FlatAdamOptions options_;
  std::vector<float> m_, v_, gradient_;
};

// The 1-bit optimizers compress their exchange themselves and need every rank's chunk of it:
// throws ConfigError, naming `strategy`, for a compressor other than none or for absent peers.
void refuse_compressor_and_absent_peers(const StrategySetup& setup, std::string_view strategy);

}  // namespace lowcomm::strategy
