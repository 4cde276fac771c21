#include "lowcomm/optim/signum.hpp"

#include <fmt/format.h>

#include <cmath>

#include "element_pieces.hpp"
#include "lowcomm/core/simd_clones.hpp"
#include "lowcomm/error.hpp"

namespace lowcomm {

void SignumOptions::validate(std::string_view key_prefix) const {
  if (!(beta >= 0.0 && beta < 1.0))
    throw ConfigError(fmt::format("{}.beta = {}: must be in [0, 1)", key_prefix, beta));
  if (!(weight_decay >= 0.0) || !std::isfinite(weight_decay))
    throw ConfigError(
        fmt::format("{}.weight_decay = {}: must be >= 0", key_prefix, weight_decay));
}

Signum::Signum(SignumOptions options) : options_(options) { options_.validate("signum"); }

namespace {

struct SignumUpdate {
  float beta, one_minus_beta, decay, neg_lr;
  bool decays;
};

// The momentum's sign step over [begin, end), in fp32 (SIMD clones; no fused multiply-adds).
LOWCOMM_SIMD_CLONES
void signum_update(const SignumUpdate& s, std::size_t begin, std::size_t end, float* __restrict p,
                   const float* __restrict g, float* __restrict m) {
  for (std::size_t j = begin; j < end; ++j) {
    m[j] = m[j] * s.beta + s.one_minus_beta * g[j];
    // torch.sign: 0 for ±0 (and NaN stays NaN, so a NaN gradient shows in the parameters).
    const float sign = m[j] > 0.0f ? 1.0f : (m[j] < 0.0f ? -1.0f : (m[j] == 0.0f ? 0.0f : m[j]));
    if (s.decays) p[j] = p[j] * s.decay;
    p[j] = p[j] + s.neg_lr * sign;
  }
}

}  // namespace

void Signum::step(std::span<const std::span<float>> params,
                  std::span<const std::span<const float>> grads, double lr) {
  check_step("signum", params, grads, lr, sizes_);
  if (steps_ == 0) {
    sizes_ = sizes_of(params);
    momentum_ = zeros(sizes_);
  }
  const SignumUpdate update{.beta = static_cast<float>(options_.beta),
                            .one_minus_beta = static_cast<float>(1.0 - options_.beta),
                            .decay = static_cast<float>(1.0 - lr * options_.weight_decay),
                            .neg_lr = static_cast<float>(-lr),
                            .decays = options_.weight_decay != 0.0};
  for (std::size_t i = 0; i < params.size(); ++i) {
    float* p = params[i].data();
    const float* g = grads[i].data();
    float* m = momentum_[i].data();
    optim_detail::for_each_piece(params[i].size(), [&](std::size_t begin, std::size_t end) {
      signum_update(update, begin, end, p, g, m);
    });
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
  Buffers momentum = load_buffers(state, prefix, "momentum", sizes);
  steps_ = steps;
  sizes_ = std::move(sizes);
  momentum_ = std::move(momentum);
}

}  // namespace lowcomm
