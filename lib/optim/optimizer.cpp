#include "lowcomm/optim/optimizer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "lowcomm/error.hpp"

namespace lowcomm {

void Optimizer::check_step(std::string_view optimizer, std::span<const std::span<float>> params,
                           std::span<const std::span<const float>> grads, double lr,
                           const Sizes& sizes) {
  if (!(lr >= 0.0) || !std::isfinite(lr))
    throw Error(fmt::format("{}: learning rate {} must be finite and >= 0", optimizer, lr));
  if (params.size() != grads.size())
    throw Error(fmt::format("{}: {} parameter tensors but {} gradients", optimizer,
                            params.size(), grads.size()));
  if (!sizes.empty() && params.size() != sizes.size())
    throw Error(fmt::format("{}: {} tensors, but the state holds {} (pass the same tensors, in "
                            "the same order, every step)",
                            optimizer, params.size(), sizes.size()));
  for (std::size_t i = 0; i < params.size(); ++i) {
    if (grads[i].size() != params[i].size())
      throw Error(fmt::format("{}: tensor {} has {} parameters but {} gradient values", optimizer,
                              i, params[i].size(), grads[i].size()));
    if (!sizes.empty() && params[i].size() != sizes[i])
      throw Error(fmt::format("{}: tensor {} has {} parameters but its state has {}", optimizer, i,
                              params[i].size(), sizes[i]));
  }
}

Optimizer::Sizes Optimizer::sizes_of(std::span<const std::span<float>> params) {
  Sizes sizes;
  sizes.reserve(params.size());
  for (const auto& p : params) sizes.push_back(p.size());
  return sizes;
}

Optimizer::Buffers Optimizer::zeros(const Sizes& sizes, kernels::Backend backend) {
  std::size_t total = 0;
  for (const std::size_t n : sizes) total += n;
  Buffers buffers{.flat = kernels::FloatBuffer(backend, total), .views = {}};
  buffers.views.reserve(sizes.size());
  std::size_t offset = 0;
  for (const std::size_t n : sizes) {
    buffers.views.push_back(buffers.flat.span().subspan(offset, n));
    offset += n;
  }
  return buffers;
}

std::vector<std::pair<std::size_t, std::size_t>> Optimizer::update_runs(std::span<const std::span<float>> params,
                                                                        std::span<const std::span<const float>> grads) {
  std::vector<std::pair<std::size_t, std::size_t>> runs;
  for (std::size_t i = 0; i < params.size(); ++i) {
    const bool continues = i > 0 && params[i - 1].data() + params[i - 1].size() == params[i].data() &&
                           grads[i - 1].data() + grads[i - 1].size() == grads[i].data();
    if (continues) {
      runs.back().second = i + 1;
    } else {
      runs.emplace_back(i, i + 1);
    }
  }
  return runs;
}

void Optimizer::save_common(StateDict& state, std::string_view prefix, std::int64_t steps,
                            const Sizes& sizes) {
  state.put(fmt::format("{}steps", prefix), steps);
  state.put(fmt::format("{}tensors", prefix), static_cast<std::int64_t>(sizes.size()));
  for (std::size_t i = 0; i < sizes.size(); ++i)
    state.put(fmt::format("{}size/{}", prefix, i), static_cast<std::int64_t>(sizes[i]));
}

void Optimizer::load_common(const StateDict& state, std::string_view prefix,
                            std::int64_t& steps, Sizes& sizes) {
  const std::string steps_key = fmt::format("{}steps", prefix);
  const std::string tensors_key = fmt::format("{}tensors", prefix);
  const std::int64_t loaded_steps = state.integer(steps_key);
  const std::int64_t tensors = state.integer(tensors_key);
  // The next step adds one (and AdamW's bias correction counts from it): a count no run reaches
  // is a corrupt file, refused here rather than overflowing there.
  constexpr std::int64_t kMaxSteps = std::int64_t{1} << 53;
  if (loaded_steps < 0 || loaded_steps > kMaxSteps) {
    throw Error(fmt::format("{}: {} is not a step count (0 to 2^53)", steps_key, loaded_steps));
  }
  if (tensors < 0) throw Error(fmt::format("{}: {} is negative", tensors_key, tensors));
  // State exists exactly when a step was taken: a mismatch is a corrupt or foreign checkpoint.
  if ((loaded_steps == 0) != (tensors == 0))
    throw Error(fmt::format("{}: {} tensors after {} steps", tensors_key, tensors, loaded_steps));
  Sizes loaded;
  for (std::int64_t i = 0; i < tensors; ++i) {
    const std::string key = fmt::format("{}size/{}", prefix, i);
    const std::int64_t n = state.integer(key);
    if (n < 0) throw Error(fmt::format("{}: size {} is negative", key, n));
    loaded.push_back(static_cast<std::size_t>(n));
  }
  steps = loaded_steps;
  sizes = std::move(loaded);
}

void Optimizer::save_buffers(StateDict& state, std::string_view prefix, std::string_view name,
                             const Buffers& buffers) {
  for (std::size_t i = 0; i < buffers.views.size(); ++i)
    state.put(fmt::format("{}{}/{}", prefix, name, i), buffers[i]);
}

Optimizer::Buffers Optimizer::load_buffers(const StateDict& state, std::string_view prefix,
                                           std::string_view name, const Sizes& sizes,
                                           kernels::Backend backend) {
  // Every buffer checked before any memory is taken: a corrupt size fails with its key.
  std::vector<const std::vector<float>*> saved;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const std::string key = fmt::format("{}{}/{}", prefix, name, i);
    const std::vector<float>& values = state.floats(key);
    if (values.size() != sizes[i])
      throw Error(fmt::format("{}: {} values for tensor {} of size {}", key, values.size(), i,
                              sizes[i]));
    saved.push_back(&values);
  }
  Buffers buffers = zeros(sizes, backend);
  for (std::size_t i = 0; i < sizes.size(); ++i) std::ranges::copy(*saved[i], buffers[i].begin());
  return buffers;
}

}  // namespace lowcomm
