// `diloco`: DiLoCo and streaming DiLoCo (REFERENCE.md §4). Every step is an inner step of the
// local optimizer (optimizer.*) on this rank's own gradient, with no communication. Every H
// steps a fragment of the model synchronises:
//     Δ ← anchor − x                           pseudo-gradient = old − new (the sign matters)
//     Δ̄ ← mean over ranks, through compressor.* (any compressor: low precision, top-k, ...)
//     b ← μ·b + Δ̄                              outer momentum (b starts at 0, so round 1: b = Δ̄)
//     global ← anchor − η_out·(Δ̄ + μ·b)         Nesterov; heavy ball uses b in place of Δ̄ + μ·b
//                                              (the two lines are optim/'s SGD, momentum μ, on the anchor)
//     anchor ← global
//     τ steps later: x ← lerp(x, global, α) = x + α·(global − x)   (α = 1: take the global value)
// With one fragment, τ = 0 and α = 1 this is DiLoCo. Streaming DiLoCo cuts the tensors into F
// fragments of about equal size (in tensor order, identical on every rank) and staggers them:
// fragment f syncs when (step + 1) mod H = ((f + 1)·H / F) mod H, so each fragment syncs every H
// steps and some fragment every H / F steps. With τ > 0 the exchange really overlaps τ further
// inner steps: it is started without blocking at the sync step and waited for at the mix step,
// where the outer step runs, so the simulated clock hides it behind those steps' compute. The
// results are those of running the outer step at the sync step (nothing it reads changes in
// between: the fragment's next sync is H > τ steps away).
#include <fmt/format.h>

#include <memory>
#include <string>
#include <vector>

#include "builtins.hpp"
#include "../compressed_sync.hpp"
#include "lowcomm/compress/registry.hpp"
#include "lowcomm/core/timeline.hpp"
#include "lowcomm/error.hpp"
#include "lowcomm/optim/registry.hpp"
#include "lowcomm/optim/sgd.hpp"

namespace lowcomm::strategy {

namespace {

struct DilocoOptions {
  std::int64_t inner_steps = 500;  // H
  double outer_lr = 0.7;           // η_out
  double outer_momentum = 0.9;     // μ
  bool nesterov = true;
  std::int64_t fragments = 1;      // F
  std::int64_t overlap = 0;        // τ
  double alpha = 1.0;              // α
};

// strategy.diloco.*, declared once (config/options_schema.hpp).
const OptionsSchema<DilocoOptions>& diloco_schema() {
  static const auto schema =
      OptionsSchema<DilocoOptions>()
          .field("inner_steps", &DilocoOptions::inner_steps, "H: inner steps between the syncs of a fragment",
                 {.min = 1.0})
          .field("outer_lr", &DilocoOptions::outer_lr, "outer learning rate", {.min = 0.0})
          .field("outer_momentum", &DilocoOptions::outer_momentum, "outer momentum mu, in [0, 1)",
                 {.min = 0.0, .max = 1.0, .max_exclusive = true})
          .field("outer_nesterov", &DilocoOptions::nesterov, "Nesterov outer step (false: heavy ball)")
          .field("fragments", &DilocoOptions::fragments, "streaming: fragments synced in turn (1: plain DiLoCo)",
                 {.min = 1.0})
          .field("overlap_steps", &DilocoOptions::overlap,
                 "streaming: tau inner steps between a fragment's exchange and its mix", {.min = 0.0})
          .field("alpha", &DilocoOptions::alpha,
                 "streaming: x <- lerp(x_local, x_global, alpha); 1 takes the global value", {.min = 0.0, .max = 1.0});
  return schema;
}

// Tensors [first, first + count) of the model, synchronised together.
struct Fragment {
  std::size_t first = 0;
  std::size_t count = 0;
  std::unique_ptr<CompressedAllReduce> sync;
  std::vector<float> anchor;  // the last global value of these parameters
  std::unique_ptr<Sgd> outer;  // the outer step on the anchor, Δ̄ its gradient; holds b
  std::vector<float> delta, averaged;  // Δ (read by an exchange in flight) and Δ̄
  std::uint64_t mix_at = 0;  // while sync is in flight: the step that waits for it
  // Global values waiting for their mix: (step to mix at, values). Filled when an exchange
  // completes; a checkpoint holds them, never an exchange in flight.
  std::vector<std::pair<std::uint64_t, std::vector<float>>> pending;
};

// The outer step as optim/'s SGD: momentum μ without dampening, Nesterov or heavy ball, so that
// b ← μ·b + Δ̄ (b = Δ̄ on the first round) and anchor ← anchor − η_out·(Δ̄ + μ·b) or − η_out·b.
// With μ = 0 both are plain SGD, which torch's SGD (and so ours) wants spelt without Nesterov.
SgdOptions outer_step(const DilocoOptions& options) {
  return {.momentum = options.outer_momentum, .nesterov = options.nesterov && options.outer_momentum > 0.0};
}

// Splits the tensors into `count` contiguous groups of about equal element count.
std::vector<std::pair<std::size_t, std::size_t>> partition(std::span<const TensorInfo> tensors,
                                                           std::int64_t count) {
  const std::int64_t total = total_numel(tensors);
  std::vector<std::pair<std::size_t, std::size_t>> groups;
  std::size_t next = 0;
  std::int64_t seen = 0;
  for (std::int64_t f = 0; f < count; ++f) {
    const std::size_t first = next;
    const std::int64_t remaining_groups = count - f - 1;
    const std::int64_t target = (f + 1) * total / count;
    // Take at least one tensor, and leave at least one for each later group.
    do {
      seen += tensors[next].numel();
      ++next;
    } while (seen < target && tensors.size() - next > static_cast<std::size_t>(remaining_groups));
    groups.emplace_back(first, next - first);
  }
  return groups;
}

DilocoOptions diloco_options(const Config& c) {
  const DilocoOptions options = diloco_schema().read(ComponentParameters(c, "strategy.diloco"));
  if (options.outer_momentum >= 1.0) {
    throw ConfigError(fmt::format("strategy.diloco.outer_momentum = {} must be below 1", options.outer_momentum));
  }
  if (options.fragments > options.inner_steps) {
    throw ConfigError(fmt::format("strategy.diloco.fragments = {} exceeds inner_steps = {}: each fragment "
                                  "syncs once every inner_steps steps, so at most that many can take turns",
                                  options.fragments, options.inner_steps));
  }
  if (options.overlap >= options.inner_steps) {
    throw ConfigError(fmt::format("strategy.diloco.overlap_steps = {} must be below inner_steps = {}: a "
                                  "fragment's exchange must be mixed in before its next one",
                                  options.overlap, options.inner_steps));
  }
  return options;
}

// One exchange per fragment, each every H steps, through compressor.*.
std::vector<PlannedSync> diloco_syncs(const Config& config, std::span<const TensorInfo> tensors) {
  const DilocoOptions options = diloco_options(config);
  if (options.fragments > static_cast<std::int64_t>(tensors.size())) {
    throw ConfigError(fmt::format("strategy.diloco.fragments = {} but the model has only {} tensors",
                                  options.fragments, tensors.size()));
  }
  std::vector<PlannedSync> syncs;
  for (const auto& [first, count] : partition(tensors, options.fragments)) {
    PlannedSync sync = planned_sync(config, count);
    sync.first = first;
    sync.period = static_cast<std::uint64_t>(options.inner_steps);
    sync.overlap_steps = static_cast<std::uint64_t>(options.overlap);
    syncs.push_back(std::move(sync));
  }
  return syncs;
}

class Diloco final : public Strategy {
 public:
  Diloco(const StrategySetup& setup, DilocoOptions options)
      : options_(options), optimizer_(make_optimizer(setup.config, {.execution = setup.execution, .tensors = setup.tensors})) {
    for (PlannedSync& planned : diloco_syncs(setup.config, setup.tensors)) {
      Fragment& fragment = fragments_.emplace_back();
      fragment.first = planned.first;
      fragment.count = planned.count;
      fragment.sync = make_compressed_sync(setup, std::move(planned));
      const auto n = static_cast<std::size_t>(total_numel(fragment.sync->tensors()));
      fragment.anchor.assign(n, 0.0f);
      fragment.outer = std::make_unique<Sgd>(outer_step(options));
      fragment.delta.assign(n, 0.0f);
      fragment.averaged.assign(n, 0.0f);
    }
  }

  std::string_view name() const override { return "diloco"; }

  StrategyStepReport step(std::uint64_t step, double lr, std::span<const std::span<float>> params,
                          std::span<const std::span<const float>> grads) override {
    if (!anchored_) {  // x⁰: the parameters every rank starts from
      for (Fragment& f : fragments_) copy_out(params, f, f.anchor);
      anchored_ = true;
    }
    StrategyStepReport report;
    MeasuredSpan update("compute", "update");
    optimizer_->step(params, grads, lr);
    report.update_s = update.stop();

    const auto h = static_cast<std::uint64_t>(options_.inner_steps);
    const auto count = static_cast<std::uint64_t>(options_.fragments);
    for (std::size_t i = 0; i < fragments_.size(); ++i) {
      Fragment& f = fragments_[i];
      // "<=": the mix step itself may have been skipped (train.nonfinite = skip).
      if (f.sync->in_flight() && f.mix_at <= step) complete_exchange(f, report);
      if ((step + 1) % h == (i + 1) * h / count % h) {
        report.synchronized = true;
        exchange(step, params, f, report);
      }
      mix_due(step, params, f);
    }
    return report;
  }

  // Saving waits for the exchanges in flight and runs their outer steps (collective: every rank
  // saves at the same step), so that a checkpoint holds their global values as pending mixes,
  // which a resumed run applies at the same steps.
  void save_state(StateDict& state, std::string_view prefix) const override {
    for (Fragment& f : fragments_) {
      StrategyStepReport ignored;
      if (f.sync->in_flight()) complete_exchange(f, ignored);
    }
    const std::string p(prefix);
    optimizer_->save_state(state, p + "optimizer/");
    state.put(p + "anchored", anchored_ ? 1 : 0);
    for (std::size_t i = 0; i < fragments_.size(); ++i) {
      const Fragment& f = fragments_[i];
      const std::string fp = fmt::format("{}fragment/{}/", p, i);
      state.put(fp + "anchor", f.anchor);
      f.outer->save_state(state, fp + "outer/");
      state.put(fp + "pending_count", static_cast<std::int64_t>(f.pending.size()));
      for (std::size_t j = 0; j < f.pending.size(); ++j) {
        state.put(fmt::format("{}pending/{}/step", fp, j), static_cast<std::int64_t>(f.pending[j].first));
        state.put(fmt::format("{}pending/{}/values", fp, j), f.pending[j].second);
      }
      f.sync->compressor().save_state(state, fp + "compressor/");
    }
  }

  void load_state(const StateDict& state, std::string_view prefix) override {
    const std::string p(prefix);
    optimizer_->load_state(state, p + "optimizer/");
    anchored_ = state.integer(p + "anchored") != 0;
    for (std::size_t i = 0; i < fragments_.size(); ++i) {
      Fragment& f = fragments_[i];
      const std::string fp = fmt::format("{}fragment/{}/", p, i);
      load_sized(state, fp + "anchor", f.anchor);
      f.outer->load_state(state, fp + "outer/");
      f.pending.clear();
      for (std::int64_t j = 0; j < state.integer(fp + "pending_count"); ++j) {
        std::vector<float> values(f.anchor.size());
        load_sized(state, fmt::format("{}pending/{}/values", fp, j), values);
        f.pending.emplace_back(static_cast<std::uint64_t>(state.integer(fmt::format("{}pending/{}/step", fp, j))),
                               std::move(values));
      }
      f.sync->compressor().load_state(state, fp + "compressor/");
    }
  }

 private:
  static void load_sized(const StateDict& state, const std::string& key, std::vector<float>& into) {
    const std::vector<float>& saved = state.floats(key);
    if (saved.size() != into.size()) {
      throw Error(fmt::format("diloco state '{}' holds {} values, expected {}", key, saved.size(), into.size()));
    }
    into = saved;
  }

  // The fragment's parameters, concatenated, into `out`.
  static void copy_out(std::span<const std::span<float>> params, const Fragment& f, std::span<float> out) {
    std::size_t offset = 0;
    for (std::size_t t = f.first; t < f.first + f.count; ++t) {
      std::ranges::copy(params[t], out.begin() + static_cast<std::ptrdiff_t>(offset));
      offset += params[t].size();
    }
  }

  // Δ ← anchor − x and its mean over the ranks into Δ̄: blocking with τ = 0; otherwise started,
  // and finished by complete_exchange at the mix step.
  void exchange(std::uint64_t step, std::span<const std::span<float>> params, Fragment& f,
                StrategyStepReport& report) const {
    copy_out(params, f, f.delta);
    for (std::size_t i = 0; i < f.delta.size(); ++i) f.delta[i] = f.anchor[i] - f.delta[i];
    const std::vector<std::span<float>> delta_views = tensor_views(std::span(f.delta), f.sync->tensors());
    const std::vector<std::span<const float>> inputs(delta_views.begin(), delta_views.end());
    f.mix_at = step + static_cast<std::uint64_t>(options_.overlap);
    if (options_.overlap > 0) {
      report.sync += f.sync->start(step, inputs);
      return;
    }
    report.sync += f.sync->run(step, inputs, tensor_views(std::span(f.averaged), f.sync->tensors()));
    apply_outer_step(f, report);
  }

  void complete_exchange(Fragment& f, StrategyStepReport& report) const {
    report.sync += f.sync->finish(tensor_views(std::span(f.averaged), f.sync->tensors()));
    apply_outer_step(f, report);
  }

  // The outer step on the anchor from Δ̄, and its global values queued for the mix.
  void apply_outer_step(Fragment& f, StrategyStepReport& report) const {
    MeasuredSpan update("compute", "outer step");
    const std::vector<std::span<float>> anchor{f.anchor};
    const std::vector<std::span<const float>> averaged{f.averaged};
    f.outer->step(anchor, averaged, options_.outer_lr);
    f.pending.emplace_back(f.mix_at, f.anchor);
    report.update_s += update.stop();
  }

  // x ← lerp(x, global, α) for the fragment's exchanges whose overlap has ended, computed
  // as torch.lerp does, so that α = 1 gives the global value exactly.
  void mix_due(std::uint64_t step, std::span<const std::span<float>> params, Fragment& f) const {
    const auto alpha = static_cast<float>(options_.alpha);
    std::erase_if(f.pending, [&](const std::pair<std::uint64_t, std::vector<float>>& due) {
      if (due.first > step) return false;  // "<": its step was skipped (train.nonfinite = skip)
      std::size_t offset = 0;
      for (std::size_t t = f.first; t < f.first + f.count; ++t) {
        for (float& x : params[t]) {
          const float global = due.second[offset++];
          x = alpha < 0.5f ? x + alpha * (global - x) : global - (global - x) * (1.0f - alpha);
        }
      }
      return true;
    });
  }

  DilocoOptions options_;
  std::unique_ptr<Optimizer> optimizer_;
  // Mutable: saving completes the exchanges in flight (see save_state).
  mutable std::vector<Fragment> fragments_;
  bool anchored_ = false;
};

}  // namespace

StrategyInfo diloco_strategy() {
  return {
      .name = "diloco",
      .description = "DiLoCo: H local optimizer.* steps, then the pseudo-gradient averaged through "
                     "compressor.* and applied by an outer Nesterov step; streaming with fragments",
      .parameters = diloco_schema().keys(),
      .create = [](const StrategySetup& setup) -> std::unique_ptr<Strategy> {
        return std::make_unique<Diloco>(setup, diloco_options(setup.config));
      },
      .syncs = diloco_syncs,
      .transport = {},  // compressor.name
      .examples = {{"diloco_streaming", {"strategy.name=diloco", "optimizer.name=adamw", "strategy.diloco.inner_steps=4",
                                         "strategy.diloco.fragments=2", "strategy.diloco.overlap_steps=2",
                                         "strategy.diloco.alpha=0.5", "compressor.name=quantize"}},
                   {"sparseloco", {"strategy.name=diloco", "strategy.diloco.inner_steps=3",
                                   "compressor.name=sparseloco", "compressor.sparseloco.chunk=4",
                                   "compressor.sparseloco.topk=2"}}},
      .label = {{"inner_steps", "H"}, {"fragments", "F", "1"}, {"overlap_steps", "tau", "0"}, {"alpha", "alpha", "1"}}};
}

}  // namespace lowcomm::strategy
