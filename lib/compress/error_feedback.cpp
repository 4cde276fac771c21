#include "lowcomm/compress/error_feedback.hpp"

#include <fmt/format.h>

#include "lowcomm/error.hpp"

namespace lowcomm {

namespace {

// Elements below which one thread does a loop: starting the team costs more.
constexpr std::size_t kParallelElements = std::size_t{1} << 15;

}  // namespace

ErrorFeedback::ErrorFeedback(std::unique_ptr<Compressor> inner, float decay)
    : inner_(std::move(inner)), decay_(decay) {
  if (!inner_) throw Error("ErrorFeedback needs a compressor to wrap");
  if (!(decay_ >= 0.0f && decay_ <= 1.0f)) {
    throw Error(fmt::format("error feedback decay {} is outside [0, 1]", decay_));
  }
}

Message ErrorFeedback::encode(const UnitContext& unit, std::span<const float> gradient, UnitScratch& scratch) {
  std::vector<float>& residual = residuals_[unit.unit_id];
  if (residual.empty()) residual.assign(gradient.size(), 0.0f);
  if (residual.size() != gradient.size()) {
    throw Error(fmt::format("error feedback: unit '{}' changed size from {} to {} elements",
                            unit.name, residual.size(), gradient.size()));
  }
  Corrected& corrected = scratch.get_or_create<Corrected>();
  corrected.values.resize(gradient.size());
  // Element-wise, so the rank's threads split it with no effect on the bits.
  const std::size_t n = gradient.size();
  const float* g = gradient.data();
  const float* r = residual.data();
  float* c = corrected.values.data();
  if (decay_ == 1.0f) {
#pragma omp parallel for simd schedule(static) if (n >= kParallelElements)
    for (std::size_t i = 0; i < n; ++i) c[i] = g[i] + r[i];
  } else {
    // (β·residual) rounded first, then the sum: DeMo's δ.mul_(β); δ.add_(η·g).
    const float decay = decay_;
#pragma omp parallel for simd schedule(static) if (n >= kParallelElements)
    for (std::size_t i = 0; i < n; ++i) c[i] = decay * r[i] + g[i];
  }
  return inner_->encode(unit, corrected.values, corrected.inner);
}

std::optional<Message> ErrorFeedback::decode(const UnitContext& unit, int round, const Received& received,
                                             UnitScratch& scratch, std::span<float> aggregate) {
  Corrected& corrected = scratch.get<Corrected>();
  std::optional<Message> next = inner_->decode(unit, round, received, corrected.inner, aggregate);
  if (next) return next;
  std::vector<float>& residual = residuals_.at(unit.unit_id);
  if (!unit.present) {  // this step's exchange carried nothing of this rank: keep all of it
    residual.swap(corrected.values);
    return std::nullopt;
  }
  if (inner_->transmitted_is_aggregate(unit)) {
    // residual ← corrected − aggregate, the reconstruction decode has just written.
    const std::size_t n = residual.size();
    const float* c = corrected.values.data();
    const float* a = aggregate.data();
    float* r = residual.data();
#pragma omp parallel for simd schedule(static) if (n >= kParallelElements)
    for (std::size_t i = 0; i < n; ++i) r[i] = c[i] - a[i];
  } else if (inner_->transmitted_entries(unit, corrected.values, corrected.inner, corrected.transmitted)) {
    // residual ← corrected − transmitted where transmitted is not +0, and corrected elsewhere
    // (x − (+0) is x, bit for bit): the buffers swap, so the residual's old storage becomes next
    // step's `corrected`, and only the entries are written.
    residual.swap(corrected.values);
    const SparseEntries& sent = corrected.transmitted;
    for (std::size_t p = 0; p < sent.indices.size(); ++p) {
      float& r = residual[static_cast<std::size_t>(sent.indices[p])];
      r = r - sent.values[p];
    }
  } else {
    // residual ← corrected − transmitted, computed in the residual's own storage.
    inner_->transmitted(unit, corrected.values, corrected.inner, residual);
    const std::size_t n = residual.size();
    const float* c = corrected.values.data();
    float* r = residual.data();
#pragma omp parallel for simd schedule(static) if (n >= kParallelElements)
    for (std::size_t i = 0; i < n; ++i) r[i] = c[i] - r[i];
  }
  return std::nullopt;
}

void ErrorFeedback::transmitted(const UnitContext& unit, std::span<const float> input, const UnitScratch& scratch,
                                std::span<float> out) const {
  inner_->transmitted(unit, input, scratch.get<Corrected>().inner, out);
}

std::optional<std::uint64_t> ErrorFeedback::wire_bytes(const UnitContext& unit, int round) const {
  return inner_->wire_bytes(unit, round);
}

std::span<const float> ErrorFeedback::residual(std::uint32_t unit_id) const {
  const auto it = residuals_.find(unit_id);
  return it == residuals_.end() ? std::span<const float>() : std::span<const float>(it->second);
}

void ErrorFeedback::save_state(StateDict& state, std::string_view prefix) const {
  for (const auto& [id, residual] : residuals_) state.put(fmt::format("{}residual/{}", prefix, id), residual);
  inner_->save_state(state, fmt::format("{}inner/", prefix));
}

void ErrorFeedback::load_state(const StateDict& state, std::string_view prefix) {
  residuals_.clear();
  const std::string residual_prefix = fmt::format("{}residual/", prefix);
  for (const std::string& key : state.keys()) {
    if (!key.starts_with(residual_prefix)) continue;
    const std::string id_text = key.substr(residual_prefix.size());
    std::uint32_t id = 0;
    try {
      id = static_cast<std::uint32_t>(std::stoul(id_text));
    } catch (const std::exception&) {
      throw Error(fmt::format("error feedback state: '{}' does not name a unit id", key));
    }
    residuals_[id] = state.floats(key);
  }
  inner_->load_state(state, fmt::format("{}inner/", prefix));
}

}  // namespace lowcomm
