#pragma once
// SGD with momentum, dampening, Nesterov and coupled weight decay, as torch.optim.SGD (the
// single-tensor path of torch 1.13, same operations in the same order, in fp32):
//   d = g + wd·p                              (when wd ≠ 0)
//   b = d on the first step, else b = μ·b + (1 − τ)·d     (when μ ≠ 0)
//   d = d + μ·b (Nesterov) or d = b           (when μ ≠ 0)
//   p = p − lr·d
#include <string_view>

#include "lowcomm/kernels/execution_context.hpp"
#include "lowcomm/optim/optimizer.hpp"

namespace lowcomm {

struct SgdOptions {
  double momentum = 0.0;      // μ ≥ 0
  double dampening = 0.0;     // τ
  bool nesterov = false;      // needs μ > 0 and τ = 0
  double weight_decay = 0.0;  // ≥ 0, added to the gradient
  // Throws ConfigError naming "<key_prefix>.<parameter>" for a value torch rejects.
  void validate(std::string_view key_prefix = "optimizer.sgd") const;
};

class Sgd final : public Optimizer {
 public:
  // State and updates on `execution`'s backend (kernels/optimizer_updates.hpp).
  explicit Sgd(SgdOptions options = {}, ExecutionContext execution = {});
  std::string_view name() const override { return "sgd"; }
  void step(std::span<const std::span<float>> params,
            std::span<const std::span<const float>> grads, double lr) override;
  std::int64_t steps() const override { return steps_; }
  void save_state(StateDict& state, std::string_view prefix) const override;
  void load_state(const StateDict& state, std::string_view prefix) override;

 private:
  SgdOptions options_;
  kernels::Backend backend_;
  std::int64_t steps_ = 0;
  Sizes sizes_;  // of the first step
  Buffers momentum_;  // empty while μ = 0: torch keeps no buffer then
};

}  // namespace lowcomm
