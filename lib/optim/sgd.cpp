#include "lowcomm/optim/sgd.hpp"

#include <fmt/format.h>

#include <cmath>

#include "lowcomm/error.hpp"
#include "lowcomm/kernels/optimizer_updates.hpp"

namespace lowcomm {

void SgdOptions::validate(std::string_view key_prefix) const {
  // torch.optim.SGD's checks; NaN fails every comparison, so it is rejected too.
  if (!(momentum >= 0.0) || !std::isfinite(momentum))
    throw ConfigError(fmt::format("{}.momentum = {}: must be >= 0", key_prefix, momentum));
  if (!std::isfinite(dampening))
    throw ConfigError(fmt::format("{}.dampening = {}: must be finite", key_prefix, dampening));
  if (!(weight_decay >= 0.0) || !std::isfinite(weight_decay))
    throw ConfigError(
        fmt::format("{}.weight_decay = {}: must be >= 0", key_prefix, weight_decay));
  if (nesterov && (momentum <= 0.0 || dampening != 0.0))
    throw ConfigError(fmt::format("{}.nesterov = true: needs {}.momentum > 0 and "
                                  "{}.dampening = 0 (momentum {}, dampening {})",
                                  key_prefix, key_prefix, key_prefix, momentum, dampening));
}

Sgd::Sgd(SgdOptions options, ExecutionContext execution) : options_(options), backend_(execution.backend) {
  options_.validate("sgd");
}

void Sgd::step(std::span<const std::span<float>> params,
               std::span<const std::span<const float>> grads, double lr) {
  check_step("sgd", params, grads, lr, sizes_);
  const bool first = steps_ == 0;
  if (first) sizes_ = sizes_of(params);
  const bool use_momentum = options_.momentum != 0.0;
  if (first && use_momentum) momentum_ = zeros(sizes_, backend_);
  // torch turns its Python scalars into fp32 before the kernels run; so do we.
  const kernels::SgdScalars update{.wd = static_cast<float>(options_.weight_decay),
                                   .mu = static_cast<float>(options_.momentum),
                                   .keep = static_cast<float>(1.0 - options_.dampening),
                                   .neg_lr = static_cast<float>(-lr),
                                   .decays = options_.weight_decay != 0.0,
                                   .momentum = use_momentum,
                                   .first = first,
                                   .nesterov = options_.nesterov};
  for (const auto& [first, last] : update_runs(params, grads)) {
    kernels::sgd_update(backend_, update, joined(params, first, last), joined(grads, first, last),
                        use_momentum ? momentum_.run(first, last) : std::span<float>());
  }
  ++steps_;
}

void Sgd::save_state(StateDict& state, std::string_view prefix) const {
  save_common(state, prefix, steps_, sizes_);
  save_buffers(state, prefix, "momentum", momentum_);
}

void Sgd::load_state(const StateDict& state, std::string_view prefix) {
  std::int64_t steps = 0;
  Sizes sizes;
  load_common(state, prefix, steps, sizes);
  Buffers momentum;
  if (options_.momentum != 0.0) momentum = load_buffers(state, prefix, "momentum", sizes, backend_);
  steps_ = steps;
  sizes_ = std::move(sizes);
  momentum_ = std::move(momentum);
}

}  // namespace lowcomm
