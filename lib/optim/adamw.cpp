#include "lowcomm/optim/adamw.hpp"

#include <fmt/format.h>

#include <cmath>

#include "lowcomm/error.hpp"
#include "lowcomm/kernels/optimizer_updates.hpp"

namespace lowcomm {

namespace {

void require_beta(std::string_view key_prefix, std::string_view name, double beta) {
  if (!(beta >= 0.0 && beta < 1.0))
    throw ConfigError(fmt::format("{}.{} = {}: must be in [0, 1)", key_prefix, name, beta));
}

}  // namespace

void AdamWOptions::validate(std::string_view key_prefix) const {
  require_beta(key_prefix, "beta1", beta1);
  require_beta(key_prefix, "beta2", beta2);
  if (!(eps > 0.0) || !std::isfinite(eps))
    throw ConfigError(fmt::format("{}.eps = {}: must be > 0", key_prefix, eps));
  if (!(weight_decay >= 0.0) || !std::isfinite(weight_decay))
    throw ConfigError(
        fmt::format("{}.weight_decay = {}: must be >= 0", key_prefix, weight_decay));
}

AdamW::AdamW(AdamWOptions options, ExecutionContext execution) : options_(options), backend_(execution.backend) {
  options_.validate("adamw");
}

void AdamW::step(std::span<const std::span<float>> params,
                 std::span<const std::span<const float>> grads, double lr) {
  check_step("adamw", params, grads, lr, sizes_);
  if (steps_ == 0) {
    sizes_ = sizes_of(params);
    exp_avg_ = zeros(sizes_, backend_);
    exp_avg_sq_ = zeros(sizes_, backend_);
  }
  const std::int64_t t = steps_ + 1;
  // The scalars in double, as torch's Python code computes them, then rounded to fp32 where a
  // kernel receives them.
  const double b1 = options_.beta1, b2 = options_.beta2;
  const double bias_correction1 = 1.0 - std::pow(b1, static_cast<double>(t));
  const double bias_correction2 = 1.0 - std::pow(b2, static_cast<double>(t));
  const double step_size = lr / bias_correction1;
  const kernels::AdamWScalars scalars{.decay = static_cast<float>(1.0 - lr * options_.weight_decay),
                                       .beta1 = static_cast<float>(b1),
                                       .beta2 = static_cast<float>(b2),
                                       .one_minus_beta1 = static_cast<float>(1.0 - b1),
                                       .one_minus_beta2 = static_cast<float>(1.0 - b2),
                                       .bc2_sqrt = static_cast<float>(std::sqrt(bias_correction2)),
                                       .eps = static_cast<float>(options_.eps),
                                       .neg_step_size = static_cast<float>(-step_size)};
  for (const auto& [first, last] : update_runs(params, grads)) {
    kernels::adamw_update(backend_, scalars, joined(params, first, last), joined(grads, first, last),
                          exp_avg_.run(first, last), exp_avg_sq_.run(first, last));
  }
  steps_ = t;
}

std::vector<std::span<float>> AdamW::state_views(std::string_view buffer) {
  if (buffer == "exp_avg") return exp_avg_.views;
  if (buffer == "exp_avg_sq") return exp_avg_sq_.views;
  return {};
}

void AdamW::save_state(StateDict& state, std::string_view prefix) const {
  save_common(state, prefix, steps_, sizes_);
  save_buffers(state, prefix, "exp_avg", exp_avg_);
  save_buffers(state, prefix, "exp_avg_sq", exp_avg_sq_);
}

void AdamW::load_state(const StateDict& state, std::string_view prefix) {
  std::int64_t steps = 0;
  Sizes sizes;
  load_common(state, prefix, steps, sizes);
  Buffers exp_avg = load_buffers(state, prefix, "exp_avg", sizes, backend_);
  Buffers exp_avg_sq = load_buffers(state, prefix, "exp_avg_sq", sizes, backend_);
  steps_ = steps;
  sizes_ = std::move(sizes);
  exp_avg_ = std::move(exp_avg);
  exp_avg_sq_ = std::move(exp_avg_sq);
}

}  // namespace lowcomm
