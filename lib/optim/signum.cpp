#include "lowcomm/optim/signum.hpp"

#include <fmt/format.h>

#include <cmath>

#include "lowcomm/error.hpp"
#include "lowcomm/kernels/optimizer_updates.hpp"

namespace lowcomm {

void SignumOptions::validate(std::string_view key_prefix) const {
  if (!(beta >= 0.0 && beta < 1.0))
    throw ConfigError(fmt::format("{}.beta = {}: must be in [0, 1)", key_prefix, beta));
  if (!(weight_decay >= 0.0) || !std::isfinite(weight_decay))
    throw ConfigError(
        fmt::format("{}.weight_decay = {}: must be >= 0", key_prefix, weight_decay));
}

Signum::Signum(SignumOptions options, ExecutionContext execution)
    : options_(options), backend_(execution.backend) {
  options_.validate("signum");
}

void Signum::step(std::span<const std::span<float>> params,
                  std::span<const std::span<const float>> grads, double lr) {
  check_step("signum", params, grads, lr, sizes_);
  if (steps_ == 0) {
    sizes_ = sizes_of(params);
    momentum_ = zeros(sizes_, backend_);
  }
  const kernels::SignumScalars update{.beta = static_cast<float>(options_.beta),
                                      .one_minus_beta = static_cast<float>(1.0 - options_.beta),
                                      .decay = static_cast<float>(1.0 - lr * options_.weight_decay),
                                      .neg_lr = static_cast<float>(-lr),
                                      .decays = options_.weight_decay != 0.0};
  for (const auto& [first, last] : update_runs(params, grads)) {
    kernels::signum_update(backend_, update, joined(params, first, last), joined(grads, first, last),
                           momentum_.run(first, last));
  }
  ++steps_;
}

void Signum::save_state(StateDict& state, std::string_view prefix) const {
  save_common(state, prefix, steps_, sizes_);
  save_buffers(state, prefix, "momentum", momentum_);
}

void Signum::load_state(const StateDict& state, std::string_view prefix) {
  std::int64_t steps = 0;
  Sizes sizes;
  load_common(state, prefix, steps, sizes);
  Buffers momentum = load_buffers(state, prefix, "momentum", sizes, backend_);
  steps_ = steps;
  sizes_ = std::move(sizes);
  momentum_ = std::move(momentum);
}

}  // namespace lowcomm
