#include "lowcomm/optim/adamw.hpp"

#include <fmt/format.h>

#include <cmath>

#include "element_pieces.hpp"
#include "lowcomm/core/simd_clones.hpp"
#include "lowcomm/error.hpp"

namespace lowcomm {

namespace {

void require_beta(std::string_view key_prefix, std::string_view name, double beta) {
  if (!(beta >= 0.0 && beta < 1.0))
    throw ConfigError(fmt::format("{}.{} = {}: must be in [0, 1)", key_prefix, name, beta));
}

struct UpdateScalars {
  float decay, beta1, beta2, one_minus_beta1, one_minus_beta2, bc2_sqrt, eps, neg_step_size;
};

// torch's _single_tensor_adamw, operation for operation in fp32, over [begin, end). Vectorised
// (SIMD clones; no multiply-add is fused, so every clone gives the baseline's bits).
LOWCOMM_SIMD_CLONES
void update(const UpdateScalars& s, std::size_t begin, std::size_t end, float* __restrict p,
            const float* __restrict g, float* __restrict m, float* __restrict v) {
  for (std::size_t j = begin; j < end; ++j) {
    const float decayed = p[j] * s.decay;
    m[j] = m[j] * s.beta1 + s.one_minus_beta1 * g[j];
    v[j] = v[j] * s.beta2 + s.one_minus_beta2 * g[j] * g[j];
    const float denom = std::sqrt(v[j]) / s.bc2_sqrt + s.eps;
    p[j] = decayed + s.neg_step_size * m[j] / denom;
  }
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

AdamW::AdamW(AdamWOptions options) : options_(options) { options_.validate("adamw"); }

void AdamW::step(std::span<const std::span<float>> params,
                 std::span<const std::span<const float>> grads, double lr) {
  check_step("adamw", params, grads, lr, sizes_);
  if (steps_ == 0) {
    sizes_ = sizes_of(params);
    exp_avg_ = zeros(sizes_);
    exp_avg_sq_ = zeros(sizes_);
  }
  const std::int64_t t = steps_ + 1;
  // The scalars in double, as torch's Python code computes them, then rounded to fp32 where a
  // kernel receives them.
  const double b1 = options_.beta1, b2 = options_.beta2;
  const double bias_correction1 = 1.0 - std::pow(b1, static_cast<double>(t));
  const double bias_correction2 = 1.0 - std::pow(b2, static_cast<double>(t));
  const double step_size = lr / bias_correction1;
  const UpdateScalars scalars{.decay = static_cast<float>(1.0 - lr * options_.weight_decay),
                              .beta1 = static_cast<float>(b1),
                              .beta2 = static_cast<float>(b2),
                              .one_minus_beta1 = static_cast<float>(1.0 - b1),
                              .one_minus_beta2 = static_cast<float>(1.0 - b2),
                              .bc2_sqrt = static_cast<float>(std::sqrt(bias_correction2)),
                              .eps = static_cast<float>(options_.eps),
                              .neg_step_size = static_cast<float>(-step_size)};
  for (std::size_t i = 0; i < params.size(); ++i) {
    const std::size_t n = params[i].size();
    float* p = params[i].data();
    const float* g = grads[i].data();
    float* m = exp_avg_[i].data();
    float* v = exp_avg_sq_[i].data();
    optim_detail::for_each_piece(n, [&](std::size_t begin, std::size_t end) { update(scalars, begin, end, p, g, m, v); });
  }
  steps_ = t;
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
  Buffers exp_avg = load_buffers(state, prefix, "exp_avg", sizes);
  Buffers exp_avg_sq = load_buffers(state, prefix, "exp_avg_sq", sizes);
  steps_ = steps;
  sizes_ = std::move(sizes);
  exp_avg_ = std::move(exp_avg);
  exp_avg_sq_ = std::move(exp_avg_sq);
}

}  // namespace lowcomm
