#include "lowcomm/optim/muon.hpp"

#include <fmt/format.h>
#include <fnmatch.h>

#include <algorithm>
#include <cmath>

#include "lowcomm/error.hpp"
#include "lowcomm/kernels/elementwise.hpp"
#include "lowcomm/optim/newton_schulz.hpp"

namespace lowcomm {

namespace {

// The comma-separated patterns of `list`, each trimmed of spaces; empty ones dropped.
std::vector<std::string> patterns_of(std::string_view list) {
  std::vector<std::string> patterns;
  while (!list.empty()) {
    const std::size_t comma = list.find(',');
    std::string_view item = list.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (!item.empty()) patterns.emplace_back(item);
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return patterns;
}

bool matches_any(const std::string& name, const std::vector<std::string>& patterns) {
  return std::ranges::any_of(patterns, [&](const std::string& p) { return fnmatch(p.c_str(), name.c_str(), 0) == 0; });
}

AdamWOptions adamw_part(const MuonOptions& o) {
  return {.beta1 = o.adamw_beta1, .beta2 = o.adamw_beta2, .eps = o.adamw_eps, .weight_decay = o.adamw_weight_decay};
}

std::int64_t rows_of(const TensorInfo& t) { return t.shape[0]; }
std::int64_t cols_of(const TensorInfo& t) { return t.shape[1]; }

// The options, checked before any part of the optimizer is made from them.
const MuonOptions& validated(const MuonOptions& options) {
  options.validate("muon");
  return options;
}

}  // namespace

void MuonOptions::validate(std::string_view key_prefix) const {
  if (!(momentum >= 0.0 && momentum < 1.0)) {
    throw ConfigError(fmt::format("{}.momentum = {}: must be in [0, 1)", key_prefix, momentum));
  }
  if (ns_steps < 0) throw ConfigError(fmt::format("{}.ns_steps = {}: must be >= 0", key_prefix, ns_steps));
  if (!(weight_decay >= 0.0) || !std::isfinite(weight_decay)) {
    throw ConfigError(fmt::format("{}.weight_decay = {}: must be >= 0", key_prefix, weight_decay));
  }
  if (!(adamw_lr_scale > 0.0) || !std::isfinite(adamw_lr_scale)) {
    throw ConfigError(fmt::format("{}.adamw_lr_scale = {}: must be > 0", key_prefix, adamw_lr_scale));
  }
  const AdamWOptions adamw = adamw_part(*this);
  try {
    adamw.validate(fmt::format("{}.adamw", key_prefix));
  } catch (const ConfigError& e) {
    // "<prefix>.adamw.beta1" names no key: the keys are <prefix>.adamw_beta1 and so on.
    std::string message = e.what();
    const std::string from = fmt::format("{}.adamw.", key_prefix), to = fmt::format("{}.adamw_", key_prefix);
    if (const std::size_t at = message.find(from); at != std::string::npos) message.replace(at, from.size(), to);
    throw ConfigError(message);
  }
}

Muon::Muon(MuonOptions options, const OptimizerSetup& setup)
    : options_(validated(options)),
      backend_(setup.execution.backend),
      tensors_(setup.tensors),
      adamw_optimizer_(adamw_part(options_), setup.execution) {
  if (tensors_.empty()) {
    throw ConfigError("optimizer muon orthogonalises the 2-D weights, so it needs the tensors' names and shapes: "
                      "create it through a strategy, or pass OptimizerSetup::tensors");
  }
  const std::vector<std::string> patterns = patterns_of(options_.adamw_tensors);
  for (std::size_t i = 0; i < tensors_.size(); ++i) {
    const TensorInfo& t = tensors_[i];
    sizes_.push_back(static_cast<std::size_t>(t.numel()));
    const bool matrix = t.shape.size() == 2 && t.shape[0] > 0 && t.shape[1] > 0;
    (matrix && !matches_any(t.name, patterns) ? muon_ : adamw_).push_back(i);
  }
}

bool Muon::orthogonalised(std::size_t i) const { return std::ranges::find(muon_, i) != muon_.end(); }

void Muon::step(std::span<const std::span<float>> params, std::span<const std::span<const float>> grads, double lr) {
  check_step("muon", params, grads, lr, sizes_);
  if (momentum_.views.size() != muon_.size()) {  // the first step (or a restored state from before it)
    Sizes muon_sizes;
    for (const std::size_t i : muon_) muon_sizes.push_back(sizes_[i]);
    momentum_ = zeros(muon_sizes, backend_);
  }
  if (!muon_.empty() && update_.span().empty()) {  // the working memory, once: the largest tensor's
    std::size_t largest = 0, largest_scratch = 0;
    for (const std::size_t i : muon_) {
      largest = std::max(largest, sizes_[i]);
      largest_scratch = std::max(largest_scratch, newton_schulz_scratch_size(rows_of(tensors_[i]), cols_of(tensors_[i])));
    }
    update_ = kernels::FloatBuffer(backend_, largest);
    scratch_ = kernels::FloatBuffer(backend_, largest_scratch);
  }

  const auto beta = static_cast<float>(options_.momentum);
  const auto one_minus_beta = static_cast<float>(1.0 - options_.momentum);
  for (std::size_t j = 0; j < muon_.size(); ++j) {
    const std::size_t i = muon_[j];
    const std::int64_t rows = rows_of(tensors_[i]), cols = cols_of(tensors_[i]);
    const std::span<float> m = momentum_[j];
    const std::span<float> u = update_.span().first(sizes_[i]);
    kernels::scale(backend_, beta, m, m);
    kernels::scale_add(backend_, one_minus_beta, grads[i], m, m);
    if (options_.nesterov) {
      kernels::scale(backend_, beta, m, u);
      kernels::scale_add(backend_, one_minus_beta, grads[i], u, u);
    } else {
      kernels::scale(backend_, 1.0f, m, u);
    }
    orthogonalize_newton_schulz(backend_, u, rows, cols, static_cast<int>(options_.ns_steps),
                                scratch_.span().first(newton_schulz_scratch_size(rows, cols)));
    if (options_.weight_decay != 0.0) {
      kernels::scale(backend_, static_cast<float>(1.0 - lr * options_.weight_decay), params[i], params[i]);
    }
    const double shape_scale = std::sqrt(std::max(1.0, static_cast<double>(rows) / static_cast<double>(cols)));
    kernels::scale_add(backend_, static_cast<float>(-lr * shape_scale), u, params[i], params[i]);
  }
  if (!adamw_.empty()) {
    std::vector<std::span<float>> adamw_params;
    std::vector<std::span<const float>> adamw_grads;
    for (const std::size_t i : adamw_) {
      adamw_params.push_back(params[i]);
      adamw_grads.push_back(grads[i]);
    }
    adamw_optimizer_.step(adamw_params, adamw_grads, lr * options_.adamw_lr_scale);
  }
  ++steps_;
}

void Muon::save_state(StateDict& state, std::string_view prefix) const {
  save_common(state, prefix, steps_, sizes_of(momentum_.views));
  save_buffers(state, prefix, "momentum", momentum_);
  adamw_optimizer_.save_state(state, fmt::format("{}adamw/", prefix));
}

void Muon::load_state(const StateDict& state, std::string_view prefix) {
  std::int64_t steps = 0;
  Sizes sizes;
  load_common(state, prefix, steps, sizes);
  if (!sizes.empty() && sizes.size() != muon_.size()) {
    throw Error(fmt::format("{}tensors: the checkpoint's Muon state has {} orthogonalised tensors, this model {}",
                            prefix, sizes.size(), muon_.size()));
  }
  for (std::size_t j = 0; j < sizes.size(); ++j) {
    if (sizes[j] != static_cast<std::size_t>(tensors_[muon_[j]].numel())) {
      throw Error(fmt::format("{}size/{}: {} values in the checkpoint, {} in tensor '{}'", prefix, j, sizes[j],
                              tensors_[muon_[j]].numel(), tensors_[muon_[j]].name));
    }
  }
  Buffers momentum = load_buffers(state, prefix, "momentum", sizes, backend_);
  adamw_optimizer_.load_state(state, fmt::format("{}adamw/", prefix));
  steps_ = steps;
  momentum_ = std::move(momentum);
}

}  // namespace lowcomm
