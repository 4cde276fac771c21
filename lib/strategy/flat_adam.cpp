#include "flat_adam.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "lowcomm/comm/network_config.hpp"
#include "lowcomm/comm/participation.hpp"
#include "lowcomm/error.hpp"

namespace lowcomm::strategy {

FlatAdam::FlatAdam(std::size_t n, FlatAdamOptions options)
    : options_(options), m_(n, 0.0f), v_(n, 0.0f), gradient_(n, 0.0f) {}

std::span<float> FlatAdam::take_gradient(std::span<const std::span<const float>> grads) {
  std::size_t total = 0;
  for (const std::span<const float> g : grads) total += g.size();
  if (total != gradient_.size()) {
    throw Error(fmt::format("{} gradient values for a model of {} parameters", total, gradient_.size()));
  }
  auto out = gradient_.begin();
  for (const std::span<const float> g : grads) out = std::ranges::copy(g, out).out;
  return gradient_;
}

void FlatAdam::update_moments(std::span<const float> g) {
  const auto b1 = static_cast<float>(options_.beta1), c1 = static_cast<float>(1.0 - options_.beta1);
  const auto b2 = static_cast<float>(options_.beta2), c2 = static_cast<float>(1.0 - options_.beta2);
  for (std::size_t i = 0; i < m_.size(); ++i) {
    v_[i] = v_[i] * b2 + c2 * (g[i] * g[i]);
    m_[i] = m_[i] * b1 + c1 * g[i];
  }
}

void FlatAdam::update_momentum(std::span<const float> g) {
  const auto b1 = static_cast<float>(options_.beta1), c1 = static_cast<float>(1.0 - options_.beta1);
  for (std::size_t i = 0; i < m_.size(); ++i) m_[i] = m_[i] * b1 + c1 * g[i];
}

void FlatAdam::apply(std::span<const std::span<float>> params, float eta, std::span<float> accumulator) const {
  const auto eps = static_cast<float>(options_.eps), decay = static_cast<float>(options_.weight_decay);
  std::size_t i = 0;
  for (const std::span<float> x : params) {
    for (float& value : x) {
      float u = m_[i] / (std::sqrt(v_[i]) + eps);
      if (decay > 0.0f) u += decay * value;
      const float step = -eta * u;
      value += step;
      if (!accumulator.empty()) accumulator[i] += step;
      ++i;
    }
  }
}

void FlatAdam::save_state(StateDict& state, const std::string& prefix) const {
  state.put(prefix + "exp_avg", std::span<const float>(m_));
  state.put(prefix + "exp_avg_sq", std::span<const float>(v_));
}

void FlatAdam::load_state(const StateDict& state, const std::string& prefix) {
  for (auto [key, into] : {std::pair{"exp_avg", &m_}, std::pair{"exp_avg_sq", &v_}}) {
    const std::vector<float>& values = state.floats(prefix + key);
    if (values.size() != into->size()) {
      throw Error(fmt::format("state '{}{}' holds {} values; this model has {}", prefix, key, values.size(),
                              into->size()));
    }
    *into = values;
  }
}

void check_flat_adam(const FlatAdamOptions& options, std::string_view prefix) {
  if (options.beta1 >= 1.0 || options.beta2 >= 1.0) {
    throw ConfigError(fmt::format("{}.beta1 = {} and beta2 = {} must be below 1", prefix, options.beta1, options.beta2));
  }
}

void refuse_compressor_and_absent_peers(const StrategySetup& setup, std::string_view strategy) {
  if (setup.config.has("compressor.name") && setup.config.get_string("compressor.name") != "none") {
    throw ConfigError(fmt::format("strategy {} compresses its exchange itself (one sign bit per entry): set "
                                  "compressor.name = \"none\" (got \"{}\")",
                                  strategy, setup.config.get_string("compressor.name")));
  }
  if (!participation_from_config(setup.config, setup.comm.size(), setup.seed).always_everyone()) {
    throw ConfigError(fmt::format("strategy {} has no rule for absent peers (its exchange needs every rank's "
                                  "chunk): unset cluster.dropout and cluster.rank.*.absent_steps",
                                  strategy));
  }
}

}  // namespace lowcomm::strategy
