#pragma once
// AdamW as torch.optim.AdamW (the single-tensor path of torch 1.13, amsgrad off, same operations
// in the same order, in fp32), with t the step count from 1:
//   p = p·(1 − lr·wd)                         (decoupled weight decay, first)
//   m = β1·m + (1 − β1)·g
//   v = β2·v + ((1 − β2)·g)·g
//   step_size = lr / (1 − β1^t)               (in double, as torch's Python scalars)
//   denom = sqrt(v) / sqrt(1 − β2^t) + eps
//   p = p − step_size·m / denom
#include <string_view>

#include "lowcomm/kernels/execution_context.hpp"
#include "lowcomm/optim/optimizer.hpp"

namespace lowcomm {

struct AdamWOptions {
  double beta1 = 0.9;          // [0, 1)
  double beta2 = 0.999;        // [0, 1)
  double eps = 1e-8;           // > 0
  double weight_decay = 0.01;  // ≥ 0; torch's default
  // Throws ConfigError naming "<key_prefix>.<parameter>" for a value torch rejects.
  void validate(std::string_view key_prefix = "optimizer.adamw") const;
};

class AdamW final : public Optimizer {
 public:
  // State and updates on `execution`'s backend (kernels/optimizer_updates.hpp).
  explicit AdamW(AdamWOptions options = {}, ExecutionContext execution = {});
  std::string_view name() const override { return "adamw"; }
  void step(std::span<const std::span<float>> params,
            std::span<const std::span<const float>> grads, double lr) override;
  std::int64_t steps() const override { return steps_; }
  void save_state(StateDict& state, std::string_view prefix) const override;
  void load_state(const StateDict& state, std::string_view prefix) override;
  // "exp_avg" (m) and "exp_avg_sq" (v).
  std::vector<std::span<float>> state_views(std::string_view buffer) override;

 private:
  AdamWOptions options_;
  kernels::Backend backend_;
  std::int64_t steps_ = 0;
  Sizes sizes_;  // of the first step
  Buffers exp_avg_, exp_avg_sq_;
};

}  // namespace lowcomm
