#include "lowcomm/optim/sgd.hpp"

#include <fmt/format.h>

#include <cmath>

#include "element_pieces.hpp"
#include "lowcomm/core/simd_clones.hpp"
#include "lowcomm/error.hpp"

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

Sgd::Sgd(SgdOptions options) : options_(options) { options_.validate("sgd"); }

namespace {

struct SgdUpdate {
  float wd, mu, keep, neg_lr;
  bool decays, momentum, first, nesterov;
};

// torch's _single_tensor_sgd over [begin, end), in fp32 (SIMD clones; no fused multiply-adds).
LOWCOMM_SIMD_CLONES
void sgd_update(const SgdUpdate& s, std::size_t begin, std::size_t end, float* __restrict p,
                const float* __restrict g, float* __restrict buf) {
  for (std::size_t j = begin; j < end; ++j) {
    float d = g[j];
    if (s.decays) d = d + s.wd * p[j];
    if (s.momentum) {
      // The first step copies d into the buffer, as torch's clone: no dampening applied.
      buf[j] = s.first ? d : buf[j] * s.mu + s.keep * d;
      d = s.nesterov ? d + s.mu * buf[j] : buf[j];
    }
    p[j] = p[j] + s.neg_lr * d;
  }
}

}  // namespace

void Sgd::step(std::span<const std::span<float>> params,
               std::span<const std::span<const float>> grads, double lr) {
  check_step("sgd", params, grads, lr, sizes_);
  const bool first = steps_ == 0;
  if (first) sizes_ = sizes_of(params);
  const bool use_momentum = options_.momentum != 0.0;
  if (first && use_momentum) momentum_ = zeros(sizes_);
  // torch turns its Python scalars into fp32 before the kernels run; so do we.
  const SgdUpdate update{.wd = static_cast<float>(options_.weight_decay),
                         .mu = static_cast<float>(options_.momentum),
                         .keep = static_cast<float>(1.0 - options_.dampening),
                         .neg_lr = static_cast<float>(-lr),
                         .decays = options_.weight_decay != 0.0,
                         .momentum = use_momentum,
                         .first = first,
                         .nesterov = options_.nesterov};
  for (std::size_t i = 0; i < params.size(); ++i) {
    float* p = params[i].data();
    const float* g = grads[i].data();
    float* buf = use_momentum ? momentum_[i].data() : nullptr;
    optim_detail::for_each_piece(params[i].size(), [&](std::size_t begin, std::size_t end) {
      sgd_update(update, begin, end, p, g, buf);
    });
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
  if (options_.momentum != 0.0) momentum = load_buffers(state, prefix, "momentum", sizes);
  steps_ = steps;
  sizes_ = std::move(sizes);
  momentum_ = std::move(momentum);
}

}  // namespace lowcomm
