#include "lowcomm/compress/error_feedback.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "lowcomm/error.hpp"
#include "lowcomm/kernels/elementwise.hpp"
#include "lowcomm/kernels/scatter.hpp"

namespace lowcomm {

ErrorFeedback::ErrorFeedback(std::unique_ptr<Compressor> inner, float decay)
    : inner_(std::move(inner)), decay_(decay) {
  if (!inner_) throw Error("ErrorFeedback needs a compressor to wrap");
  if (!(decay_ >= 0.0f && decay_ <= 1.0f)) {
    throw Error(fmt::format("error feedback decay {} is outside [0, 1]", decay_));
  }
}

Message ErrorFeedback::encode(const UnitContext& unit, std::span<const float> gradient, UnitScratch& scratch) {
  const kernels::Backend backend = unit.execution.backend;
  kernels::FloatBuffer& residual = residuals_[unit.unit_id];
  if (residual.empty()) {
    const auto restored = restored_.find(unit.unit_id);
    if (restored == restored_.end()) {
      residual = kernels::FloatBuffer(backend, gradient.size());
    } else {
      residual = kernels::FloatBuffer(backend, restored->second.size());
      std::ranges::copy(restored->second, residual.begin());
      restored_.erase(restored);
    }
  }
  if (residual.size() != gradient.size()) {
    throw Error(fmt::format("error feedback: unit '{}' changed size from {} to {} elements",
                            unit.name, residual.size(), gradient.size()));
  }
  Corrected& corrected = scratch.get_or_create<Corrected>();
  if (corrected.values.size() != gradient.size()) corrected.values = kernels::FloatBuffer(backend, gradient.size());
  // (β·residual) rounded first, then the sum: DeMo's δ.mul_(β); δ.add_(η·g). With β = 1 the
  // product is the residual itself, so this is plain error feedback's gradient + residual.
  kernels::scale_add(backend, decay_, residual, gradient, corrected.values);
  return inner_->encode(unit, corrected.values, corrected.inner);
}

std::optional<Message> ErrorFeedback::decode(const UnitContext& unit, int round, const Received& received,
                                             UnitScratch& scratch, std::span<float> aggregate) {
  Corrected& corrected = scratch.get<Corrected>();
  std::optional<Message> next = inner_->decode(unit, round, received, corrected.inner, aggregate);
  if (next) return next;
  kernels::FloatBuffer& residual = residuals_.at(unit.unit_id);
  const kernels::Backend backend = unit.execution.backend;
  if (!unit.present) {  // this step's exchange carried nothing of this rank: keep all of it
    std::swap(residual, corrected.values);
    return std::nullopt;
  }
  const Transmitted sent = inner_->transmitted(unit, corrected.values, corrected.inner, residual);
  switch (sent.form()) {
    case Transmitted::Form::Dense:  // residual ← corrected − transmitted, in the residual's storage
      kernels::subtract(backend, corrected.values, residual, residual);
      break;
    case Transmitted::Form::Aggregate:  // residual ← corrected − the reconstruction decode just wrote
      kernels::subtract(backend, corrected.values, aggregate, residual);
      break;
    case Transmitted::Form::Entries: {
      // residual ← corrected − transmitted where transmitted is not +0, and corrected elsewhere
      // (x − (+0) is x, bit for bit): the buffers swap, so the residual's old storage becomes next
      // step's `corrected`, and only the entries are written.
      // On the backend, as residual += (−transmitted): x + (−v) is x − v bit for bit, and the
      // entries' indices are distinct, so the order of the adds does not matter.
      std::swap(residual, corrected.values);
      corrected.negated.resize(sent.values().size());
      std::ranges::transform(sent.values(), corrected.negated.begin(), [](float v) { return -v; });
      kernels::scatter_add(backend, sent.indices(), corrected.negated, residual);
      break;
    }
  }
  return std::nullopt;
}

Transmitted ErrorFeedback::transmitted(const UnitContext& unit, std::span<const float> input,
                                       const UnitScratch& scratch, std::span<float> out) const {
  return inner_->transmitted(unit, input, scratch.get<Corrected>().inner, out);
}

std::optional<std::uint64_t> ErrorFeedback::wire_bytes(const UnitContext& unit, int round) const {
  return inner_->wire_bytes(unit, round);
}

std::span<const float> ErrorFeedback::residual(std::uint32_t unit_id) const {
  if (const auto it = residuals_.find(unit_id); it != residuals_.end()) return it->second.span();
  if (const auto it = restored_.find(unit_id); it != restored_.end()) return it->second;
  return {};
}

void ErrorFeedback::save_state(StateDict& state, std::string_view prefix) const {
  for (const auto& [id, residual] : residuals_) state.put(fmt::format("{}residual/{}", prefix, id), residual.span());
  for (const auto& [id, residual] : restored_) state.put(fmt::format("{}residual/{}", prefix, id), residual);
  inner_->save_state(state, fmt::format("{}inner/", prefix));
}

void ErrorFeedback::load_state(const StateDict& state, std::string_view prefix) {
  residuals_.clear();
  restored_.clear();
  const std::string residual_prefix = fmt::format("{}residual/", prefix);
  for (const std::string& key : state.keys()) {
    if (!key.starts_with(residual_prefix)) continue;
    const std::uint32_t id = unit_id_of_state_key(key, residual_prefix);
    restored_[id] = state.floats(key);
  }
  inner_->load_state(state, fmt::format("{}inner/", prefix));
}

}  // namespace lowcomm
