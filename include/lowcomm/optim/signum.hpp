#pragma once
// Signum (Bernstein et al., 2018): the sign of a momentum buffer, with optional decoupled weight
// decay; β = 0 is signSGD. torch has no Signum, so the reference (tests/fixtures/
// make_optimizer_fixtures.py) writes it with the same fp32 operations, in this order:
//   m = β·m + (1 − β)·g                       (m starts at 0)
//   p = p·(1 − lr·wd)                         (when wd ≠ 0)
//   p = p − lr·sign(m)                        (sign(0) = 0, so a zero momentum leaves p)
#include <string_view>

#include "lowcomm/kernels/execution_context.hpp"
#include "lowcomm/optim/optimizer.hpp"

namespace lowcomm {

struct SignumOptions {
  double beta = 0.9;          // [0, 1)
  double weight_decay = 0.0;  // ≥ 0
  // Throws ConfigError naming "<key_prefix>.<parameter>" for a value out of range.
  void validate(std::string_view key_prefix = "optimizer.signum") const;
};

class Signum final : public Optimizer {
 public:
  // State and updates on `execution`'s backend (kernels/optimizer_updates.hpp).
  explicit Signum(SignumOptions options = {}, ExecutionContext execution = {});
  std::string_view name() const override { return "signum"; }
  void step(std::span<const std::span<float>> params,
            std::span<const std::span<const float>> grads, double lr) override;
  std::int64_t steps() const override { return steps_; }
  void save_state(StateDict& state, std::string_view prefix) const override;
  void load_state(const StateDict& state, std::string_view prefix) override;

 private:
  SignumOptions options_;
  kernels::Backend backend_;
  std::int64_t steps_ = 0;
  Sizes sizes_;  // of the first step
  Buffers momentum_;
};

}  // namespace lowcomm
