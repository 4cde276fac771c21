#include "lowcomm/compress/error_feedback.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "lowcomm/error.hpp"
#include "lowcomm/kernels/elementwise.hpp"
#include "lowcomm/kernels/scatter.hpp"

namespace lowcomm {

ErrorFeedback::ErrorFeedback(std::unique_ptr<Compressor> inner, float decay, Fusion fusion)
    : inner_(std::move(inner)), decay_(decay), fused_(nullptr), correcting_(nullptr) {
  if (!inner_) throw Error("ErrorFeedback needs a compressor to wrap");
  if (!(decay_ >= 0.0f && decay_ <= 1.0f)) {
    throw Error(fmt::format("error feedback decay {} is outside [0, 1]", decay_));
  }
  if (fusion == Fusion::WhereOffered) {
    fused_ = inner_->fused_error_feedback();
    if (fused_ == nullptr) correcting_ = inner_->fused_correction();
  }
}

Message ErrorFeedback::encode(const UnitContext& unit, std::span<const float> gradient, UnitScratch& scratch) {
  const kernels::Backend backend = unit.execution.backend;
  Kept& kept = kept_[unit.unit_id];
  if (kept.values.empty() && kept.form == Kept::Form::Residual) {
    const auto restored = restored_.find(unit.unit_id);
    if (restored == restored_.end()) {
      kept.values = kernels::FloatBuffer(backend, gradient.size());
    } else {
      kept.values = kernels::FloatBuffer(backend, restored->second.size());
      std::ranges::copy(restored->second, kept.values.begin());
      restored_.erase(restored);
    }
  }
  if (kept.form == Kept::Form::Replacing) {
    throw Error(fmt::format("error feedback: unit '{}' encoded again before its last decode", unit.name));
  }
  if (kept.values.size() != gradient.size()) {
    throw Error(fmt::format("error feedback: unit '{}' changed size from {} to {} elements",
                            unit.name, kept.values.size(), gradient.size()));
  }
  subtracted_.erase(unit.unit_id);
  Corrected& corrected = scratch.get_or_create<Corrected>();
  if (corrected.values.size() != gradient.size()) corrected.values = kernels::FloatBuffer(backend, gradient.size());
  if (kept.form == Kept::Form::Deferred) {
    // The inner forms corrected = β·(last corrected − transmitted) + gradient in place, in the
    // pass of its first product; the buffers then swap, so that corrected.values holds it (the
    // memory does not move: the inner may keep a span of it for its decode rounds).
    Message message = fused_->encode_corrected(unit, decay_, gradient, kept.values, corrected.inner);
    std::swap(kept.values, corrected.values);
    kept.form = Kept::Form::Replacing;
    return message;
  }
  if (correcting_ != nullptr && correcting_->corrects(unit)) {  // the sum below, in the inner's first pass
    return correcting_->encode_correcting(unit, decay_, kept.values, gradient, corrected.values, corrected.inner);
  }
  // (β·residual) rounded first, then the sum: DeMo's δ.mul_(β); δ.add_(η·g). With β = 1 the
  // product is the residual itself, so this is plain error feedback's gradient + residual.
  kernels::scale_add(backend, decay_, kept.values, gradient, corrected.values);
  return inner_->encode(unit, corrected.values, corrected.inner);
}

std::optional<Message> ErrorFeedback::decode(const UnitContext& unit, int round, const Received& received,
                                             UnitScratch& scratch, std::span<float> aggregate) {
  Corrected& corrected = scratch.get<Corrected>();
  std::optional<Message> next = inner_->decode(unit, round, received, corrected.inner, aggregate);
  if (next) return next;
  Kept& kept = kept_.at(unit.unit_id);
  kept.form = Kept::Form::Residual;
  kernels::FloatBuffer& residual = kept.values;
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
    case Transmitted::Form::Aggregate:
      if (fused_ != nullptr && fused_->keeps_transmitted(unit)) {
        // Deferred: corrected is kept, and the inner's next encode subtracts the reconstruction.
        std::swap(residual, corrected.values);
        kept.form = Kept::Form::Deferred;
      } else {  // residual ← corrected − the reconstruction decode just wrote
        kernels::subtract(backend, corrected.values, aggregate, residual);
      }
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
  if (const auto it = kept_.find(unit_id); it != kept_.end()) {
    const Kept& kept = it->second;
    switch (kept.form) {
      case Kept::Form::Residual: return kept.values.span();
      case Kept::Form::Deferred: {
        std::vector<float>& copy = subtracted_[unit_id];
        copy.resize(kept.values.size());
        fused_->subtract_transmitted(unit_id, kept.values.span(), copy);
        return copy;
      }
      case Kept::Form::Replacing:
        throw Error(fmt::format("error feedback: the residual of unit {} is being replaced by a step in flight; "
                                "read it between steps",
                                unit_id));
    }
  }
  if (const auto it = restored_.find(unit_id); it != restored_.end()) return it->second;
  return {};
}

void ErrorFeedback::save_state(StateDict& state, std::string_view prefix) const {
  for (const auto& [id, kept] : kept_) state.put(fmt::format("{}residual/{}", prefix, id), residual(id));
  for (const auto& [id, residual] : restored_) state.put(fmt::format("{}residual/{}", prefix, id), residual);
  inner_->save_state(state, fmt::format("{}inner/", prefix));
}

void ErrorFeedback::load_state(const StateDict& state, std::string_view prefix) {
  kept_.clear();
  subtracted_.clear();
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
