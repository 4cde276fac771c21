// `demo`: DeMo / DisTrO (REFERENCE.md §1). Per step and tensor:
//     x ← x·(1 − η·λ)                          decoupled weight decay (λ ≠ 0)
//     δ ← β·δ + η·g                             local momentum, η-scaled, no (1 − β)
//     transmit the fast components of δ; δ ← δ − what was transmitted
//     G ← the transport's mean over ranks;  x ← x − η·sign(G)
// The middle two lines are error feedback with a decaying residual fed η·g (error_feedback.hpp),
// so the momentum lives in an ErrorFeedback wrapped around the transport: DCT top-k by default
// (compressor.dct_topk.*, alias strategy.demo.compression_topk / _chunk / wire), or any registered compressor named by
// strategy.demo.transport, configured by its own compressor.<name>.* keys.
//
// strategy.demo.pipeline says when G is applied:
// - `none`: in the step that made it (the blocking order above).
// - `stale`: one step late, as an overlapped exchange needs: step t applies G_{t−1} with step t's
//   η, and the first step only transmits. The exchange of step t is in flight while the caller
//   computes step t + 1's forward and backward: step() starts it and returns, and the next step()
//   waits for it (CompressedAllReduce::start / finish), so the simulated clock hides it behind
//   that compute. The parameters are those of the blocking order (decay, apply G_{t−1}; the
//   momentum never depends on the parameters), bitwise for a gathering transport such as dct_topk.
// - `psyche`: Psyche's DisTrO (PsycheFoundation/psyche, shared/modeling/src/distro.rs and the
//   client's round pipeline): two steps late, applied before the forward pass, with a lookahead.
//   before_forward(s) applies G_{s−2} with η_s, then moves the weights to x − η_{s−1}·sign(δ)
//   (δ: this rank's whole momentum of step s − 1, before its transmitted part left it), where
//   the forward and backward run; step(s) moves them back and takes the step without applying
//   anything. The exchange of step s overlaps step s + 1, as with `stale`.
#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <utility>
#include <string>
#include <vector>

#include "builtins.hpp"
#include "../compressed_sync.hpp"
#include "../tensor_buffers.hpp"
#include "lowcomm/compress/dct_topk_options.hpp"
#include "lowcomm/compress/error_feedback.hpp"
#include "lowcomm/compress/registry.hpp"
#include "lowcomm/core/tensor.hpp"
#include "lowcomm/core/timeline.hpp"
#include "lowcomm/error.hpp"
#include "lowcomm/strategy/method_label.hpp"
#include "lowcomm/kernels/blocks.hpp"
#include "lowcomm/kernels/elementwise.hpp"

namespace lowcomm::strategy {

namespace {

struct DemoOptions {
  double decay = 0.999;                // β (compression_decay)
  double weight_decay = 0.0;           // λ
  std::string transport = "dct_topk";  // the compressor that carries the momentum
  std::string pipeline = "none";       // when G is applied: none, stale, psyche (see the top)
};

// strategy.demo.*, declared once (config/options_schema.hpp). DeMo's reference names for the DCT
// transport's settings are aliases of compressor.dct_topk.*: one setting each.
const OptionsSchema<DemoOptions>& demo_schema() {
  static const auto schema =
      OptionsSchema<DemoOptions>()
          .field("compression_decay", &DemoOptions::decay, "momentum decay beta, in [0, 1)", {.min = 0.0, .max = 1.0, .max_exclusive = true})
          .alias({.path = "compression_topk", .type = ValueType::Integer,
                  .description = "DeMo's reference name; DCT coefficients sent per block",
                  .alias_of = "compressor.dct_topk.topk"})
          .alias({.path = "compression_chunk", .type = ValueType::Integer,
                  .description = "DeMo's reference name; the largest DCT block side",
                  .alias_of = "compressor.dct_topk.chunk"})
          .field("weight_decay", &DemoOptions::weight_decay,
                 "decoupled weight decay: x <- x*(1 - lr*wd) before the update", {.min = 0.0})
          .alias({.path = "wire", .type = ValueType::String,
                  .description = "DeMo's reference name; reference (int64 + fp32), compact (smallest index type), "
                                 "compact_1bit (and 1-bit values)",
                  .alias_of = "compressor.dct_topk.wire"})
          .field("transport", &DemoOptions::transport,
                 "the compressor that carries the momentum (any registered one; its compressor.<name>.* keys apply)")
          .field("pipeline", &DemoOptions::pipeline,
                 "when the aggregate is applied: none (the same step), stale (the next step; the exchange "
                 "overlaps its compute), psyche (two steps late, before the forward pass, with Psyche's lookahead)",
                 {.choices = {"none", "stale", "psyche"}});
  return schema;
}

// The transport's configuration: the run's, with compressor.name set to the transport and its
// error feedback off (DeMo's own momentum is the error feedback). DeMo's reference names for the
// DCT transport's settings (strategy.demo.compression_topk, compression_chunk, wire) are aliases
// of compressor.dct_topk.topk, chunk and wire: one setting each.
Config transport_config(const Config& config, const DemoOptions& options) {
  const std::string& transport = options.transport;
  CompressorRegistry::global().find(transport);  // ConfigError listing them when unknown
  const CompressorSelection selection = compressor_selection(config);
  const std::string& named = selection.name;
  if (named != "none" && named != transport) {
    throw ConfigError(fmt::format(
        "strategy demo sends its momentum through strategy.demo.transport = \"{}\", so "
        "compressor.name = \"{}\" would be ignored: set strategy.demo.transport = \"{}\" instead, "
        "or leave compressor.name unset",
        transport, named, named));
  }
  std::vector<ConfigSetting> settings{{"compressor.name", transport},
                                      {fmt::format("compressor.{}.error_feedback", transport), false}};
  if (transport == "dct_topk") {
    settings.push_back({"compressor.granularity", std::string("tensor")});
  } else if (const DctTopKOptions dct = dct_topk_options(config);
             dct.wire != "reference" || dct.value_type || dct.index_width) {
    throw ConfigError(fmt::format("strategy.demo.wire (compressor.dct_topk.wire, value_type, index_width) applies to "
                                  "the dct_topk transport only; transport \"{}\" is set up by its compressor.{}.* keys",
                                  transport, transport));
  }
  return config.with(settings);
}

// REFERENCE.md §1: a prime dimension larger than the chunk degrades to blocks of length 1.
void warn_about_small_blocks(const StrategySetup& setup, std::int64_t chunk) {
  if (setup.comm.rank() != 0) return;
  for (const TensorInfo& t : setup.tensors) {
    for (const std::int64_t n : t.shape) {
      if (n <= chunk) continue;
      const std::int64_t length = kernels::block_length(n, chunk);
      if (length * 4 < chunk) {
        std::fprintf(stderr,
                     "lowcomm: warning: strategy demo: dimension %lld of '%s' has no divisor near "
                     "compression_chunk = %lld, so its DCT blocks are only %lld long\n",
                     static_cast<long long>(n), t.name.c_str(), static_cast<long long>(chunk),
                     static_cast<long long>(length));
      }
    }
  }
}

DemoOptions demo_options(const Config& c) {
  DemoOptions options = demo_schema().read(ComponentParameters(c, "strategy.demo"));
  if (options.decay >= 1.0) {
    throw ConfigError(fmt::format("strategy.demo.compression_decay = {} must be below 1", options.decay));
  }
  return options;
}

// The one exchange of a step: the momentum, through the transport. The momentum δ lives in the
// ErrorFeedback wrapper: state key "momentum/residual/<unit id>". It is kept as such (no fused,
// deferred form), for Psyche's lookahead reads it while the exchange runs (remember_momentum).
std::vector<PlannedSync> demo_syncs(const Config& config, std::span<const TensorInfo> tensors) {
  const DemoOptions options = demo_options(config);
  const Config transport = transport_config(config, options);
  PlannedSync sync = planned_sync(transport, tensors.size());
  sync.compressor = std::make_unique<ErrorFeedback>(std::move(sync.compressor), static_cast<float>(options.decay),
                                                    ErrorFeedback::Fusion::Off);
  sync.overlap_steps = options.pipeline == "none" ? 0 : 1;  // stale and psyche wait for it a step later
  std::vector<PlannedSync> syncs;
  syncs.push_back(std::move(sync));
  return syncs;
}

class Demo final : public Strategy {
 public:
  Demo(const StrategySetup& setup, DemoOptions options)
      : options_(std::move(options)),
        backend_(setup.execution.backend),
        scaled_(setup.tensors, backend_),
        aggregate_(setup.tensors, backend_) {
    sync_ = make_compressed_sync(setup, std::move(demo_syncs(setup.config, setup.tensors).front()));
    if (options_.transport == "dct_topk") {
      warn_about_small_blocks(setup, dct_topk_options(setup.config).chunk);
    }
    if (psyche()) {
      next_ = TensorBuffers(setup.tensors, backend_);
      lookahead_ = TensorBuffers(setup.tensors, backend_);
      forward_start_ = TensorBuffers(setup.tensors, backend_);
    }
  }

  std::string_view name() const override { return "demo"; }

  // Psyche's pipeline: G_{s−2} applied with η_s, then the lookahead x − η_{s−1}·sign(δ), where
  // the gradient is computed. The weights before the lookahead are kept, so that step() and
  // cancel_step() restore them exactly (Psyche adds η_{s−1}·sign(δ) back, which can leave the last
  // bit different from rank to rank).
  void before_forward(std::uint64_t step, double lr, std::span<const std::span<float>> params) override {
    if (!psyche()) return;
    check_learning_rate(step, lr);
    if (moved_for_step_) {
      throw Error(fmt::format("demo: before_forward({}) while the weights are still moved for step {}: call step() "
                              "or cancel_step() first",
                              step, *moved_for_step_));
    }
    if (has_pending_) {
      apply_sign(params, aggregate_, static_cast<float>(lr));
      has_pending_ = false;
    }
    for (const auto& [first, last] : contiguous_runs(params)) {
      kernels::scale(backend_, 1.0f, joined(params, first, last), joined(forward_start_.views(), first, last));
    }
    if (has_lookahead_) apply_sign(params, lookahead_, previous_eta_);
    moved_.assign(params.begin(), params.end());
    moved_for_step_ = step;
  }

  StrategyStepReport step(std::uint64_t step, double lr, std::span<const std::span<float>> params,
                          std::span<const std::span<const float>> grads) override {
    check_learning_rate(step, lr);
    if (psyche()) return psyche_step(step, lr, params, grads);
    const auto eta = static_cast<float>(lr);
    const bool stale = options_.pipeline == "stale";
    StrategyStepReport report;
    report.synchronized = true;
    report.sync += std::exchange(unreported_, SyncReport{});  // an exchange save_state finished
    if (stale && sync_->in_flight()) {  // the previous step's exchange ran during this step's compute
      report.sync += sync_->finish(aggregate_.views());
      has_pending_ = true;
    }
    MeasuredSpan update("compute", "update");
    decay_weights(params, lr);
    scale_gradients(grads, eta);
    if (stale && has_pending_) apply_sign(params, aggregate_, eta);
    report.update_s = update.stop();

    if (stale) {
      report.sync += sync_->start(step, scaled_.const_views());  // waited for by the next step
      return report;
    }
    report.sync += sync_->run(step, scaled_.const_views(), aggregate_.views());
    MeasuredSpan sign_update("compute", "update");
    apply_sign(params, aggregate_, eta);
    report.update_s += sign_update.stop();
    return report;
  }

  // The lookahead is undone; G_{s−2}, applied before it, stays applied (a later step would not
  // apply it again). The exchange of step s − 1 stays in flight.
  void cancel_step() override {
    if (!moved_for_step_) return;
    restore_forward_start();
  }

  // A checkpoint of a pipeline holds the aggregates not yet applied, decoded: saving waits for the
  // exchange in flight (collective, as every rank saves at the same step), and the following steps
  // apply them as they would have. The stored state is what it was before the exchange overlapped.
  void save_state(StateDict& state, std::string_view prefix) const override {
    if (moved_for_step_) {
      throw Error("demo: save_state between before_forward and step: the weights are moved by the lookahead");
    }
    if (sync_->in_flight()) {  // its share of the traffic goes into the next step's report
      if (psyche()) {
        unreported_ += sync_->finish(next_.views());
        has_next_ = true;
      } else {
        unreported_ += sync_->finish(aggregate_.views());
        has_pending_ = true;
      }
    }
    const std::string p(prefix);
    sync_->compressor().save_state(state, p + "momentum/");
    state.put(p + "has_pending", has_pending_ ? 1 : 0);
    if (has_pending_) aggregate_.save(state, p + "pending");
    if (!psyche()) return;
    state.put(p + "has_next", has_next_ ? 1 : 0);
    if (has_next_) next_.save(state, p + "next");
    state.put(p + "has_lookahead", has_lookahead_ ? 1 : 0);
    if (has_lookahead_) {
      lookahead_.save(state, p + "lookahead");
      state.put(p + "lookahead_lr", std::span<const float>(&previous_eta_, 1));
    }
  }
  void load_state(const StateDict& state, std::string_view prefix) override {
    if (sync_->in_flight()) throw Error("demo: load_state while an exchange is in flight");
    if (moved_for_step_) throw Error("demo: load_state between before_forward and step: the weights are moved");
    const std::string p(prefix);
    sync_->compressor().load_state(state, p + "momentum/");
    has_pending_ = state.integer(p + "has_pending") != 0;
    if (has_pending_) aggregate_.load(state, p + "pending");
    if (!psyche()) return;
    has_next_ = state.integer(p + "has_next") != 0;
    if (has_next_) next_.load(state, p + "next");
    has_lookahead_ = state.integer(p + "has_lookahead") != 0;
    if (has_lookahead_) {
      lookahead_.load(state, p + "lookahead");
      const std::vector<float>& eta = state.floats(p + "lookahead_lr");
      if (eta.size() != 1) {
        throw Error(fmt::format("demo: state '{}lookahead_lr' holds {} values; expected one learning rate", p, eta.size()));
      }
      if (!(eta[0] >= 0) || !std::isfinite(eta[0])) {
        throw Error(fmt::format("demo: state '{}lookahead_lr' is {}; expected a learning rate (finite, at least 0)", p,
                                eta[0]));
      }
      previous_eta_ = eta[0];
    }
    unreported_ = SyncReport{};
  }

 private:
  bool psyche() const { return options_.pipeline == "psyche"; }

  static void check_learning_rate(std::uint64_t step, double lr) {
    if (!(lr >= 0) || !std::isfinite(lr)) throw Error(fmt::format("demo: learning rate {} at step {}", lr, step));
  }

  // Psyche's step s, after the forward and backward at the lookahead: the weights back, decayed,
  // and the momentum's exchange started; nothing is applied (before_forward applies G_{s−2}).
  StrategyStepReport psyche_step(std::uint64_t step, double lr, std::span<const std::span<float>> params,
                                 std::span<const std::span<const float>> grads) {
    if (moved_for_step_ != step) {
      throw Error(fmt::format("demo: strategy.demo.pipeline = psyche computes the gradient at weights moved by a "
                              "lookahead: call before_forward({}) before the forward pass of step {}", step, step));
    }
    if (params.size() != moved_.size() || !std::ranges::equal(params, moved_, [](auto a, auto b) {
          return a.data() == b.data() && a.size() == b.size();
        })) {
      throw Error(fmt::format("demo: step({}) on other parameters than before_forward({}) moved", step, step));
    }
    const auto eta = static_cast<float>(lr);
    StrategyStepReport report;
    report.synchronized = true;
    report.sync += std::exchange(unreported_, SyncReport{});  // an exchange save_state finished
    // G_{s−1} arrives (before scaled_ is rewritten, which its exchange may still read):
    // before_forward(s + 1) applies it. before_forward(s) took G_{s−2}.
    if (has_pending_) throw Error("demo: an aggregate of the psyche pipeline was never applied (internal error)");
    if (sync_->in_flight()) {
      report.sync += sync_->finish(aggregate_.views());
      has_pending_ = true;
    } else if (has_next_) {  // finished by save_state
      std::swap(aggregate_, next_);
      has_next_ = false;
      has_pending_ = true;
    }
    MeasuredSpan update("compute", "update");
    restore_forward_start();
    decay_weights(params, lr);
    scale_gradients(grads, eta);
    report.update_s = update.stop();
    report.sync += sync_->start(step, scaled_.const_views());  // waited for by the next step
    MeasuredSpan lookahead("compute", "update");
    remember_momentum();
    previous_eta_ = eta;
    report.update_s += lookahead.stop();
    return report;
  }

  void restore_forward_start() {
    const std::span<const std::span<float>> params(moved_);
    for (const auto& [first, last] : contiguous_runs(params)) {
      kernels::scale(backend_, 1.0f, joined(forward_start_.const_views(), first, last), joined(params, first, last));
    }
    moved_.clear();
    moved_for_step_.reset();
  }

  // δ = β·residual + η·g of the step just started, before its transmitted part is taken out: the
  // error feedback's own input, recomputed with its kernel from the residual the exchange has not
  // yet replaced (it does so when it finishes), so the bits are the same.
  void remember_momentum() {
    const auto& momentum = static_cast<const ErrorFeedback&>(sync_->compressor());
    const auto decay = static_cast<float>(options_.decay);
    for (const CompressionUnit& unit : sync_->units()) {
      const std::size_t first = unit.tensors.front(), last = unit.tensors.back() + 1;
      kernels::scale_add(backend_, decay, momentum.residual(unit.id), joined(scaled_.const_views(), first, last),
                         joined(lookahead_.views(), first, last));
    }
    has_lookahead_ = true;
  }

  // On the strategy's backend, where the parameters and the momentum live, one call per run of
  // back-to-back tensors (a model's flat buffers are one run: one kernel launch on a GPU). The
  // strategy's own buffers are flat.
  void decay_weights(std::span<const std::span<float>> params, double lr) const {
    if (options_.weight_decay == 0.0) return;
    const auto factor = static_cast<float>(1.0 - lr * options_.weight_decay);
    for (const auto& [first, last] : contiguous_runs(params)) {
      const std::span<float> x = joined(params, first, last);
      kernels::scale(backend_, factor, x, x);
    }
  }

  void scale_gradients(std::span<const std::span<const float>> grads, float eta) {
    for (const auto& [first, last] : contiguous_runs(grads)) {
      kernels::scale(backend_, eta, joined(grads, first, last), joined(scaled_.views(), first, last));
    }
  }

  void apply_sign(std::span<const std::span<float>> params, const TensorBuffers& by, float eta) const {
    for (const auto& [first, last] : contiguous_runs(params)) {  // sign(0) = 0
      kernels::subtract_scaled_sign(backend_, eta, joined(by.const_views(), first, last), joined(params, first, last));
    }
  }

  DemoOptions options_;
  kernels::Backend backend_;
  std::unique_ptr<CompressedAllReduce> sync_;
  TensorBuffers scaled_;  // η·g of this step; with a pipeline, its exchange's input until the next step finishes it
  // G of this step; with a pipeline, G of an earlier step, held until it is applied. Mutable:
  // saving a pipeline finishes the exchange in flight (see save_state).
  mutable TensorBuffers aggregate_;
  mutable bool has_pending_ = false;
  // Psyche's pipeline only: G of the step whose exchange save_state finished (aggregate_ still holds
  // the one before it); δ of the last step, for the lookahead, and its η; the weights before the
  // lookahead of the step under way, and the spans before_forward moved.
  mutable TensorBuffers next_;
  mutable bool has_next_ = false;
  TensorBuffers lookahead_;
  bool has_lookahead_ = false;
  float previous_eta_ = 0.0f;
  TensorBuffers forward_start_;
  std::vector<std::span<float>> moved_;
  std::optional<std::uint64_t> moved_for_step_;
  // The traffic of an exchange save_state finished, reported with the next step. Mutable, as
  // save_state is const.
  mutable SyncReport unreported_;
};

// DeMo's part of a method's label (method_label.hpp): its transport (DCT top-k as "dct_topk k=32",
// with chunk= where not 64; another compressor as its own label part), wire= where not DeMo's
// reference wire, a merged exchange, the pipeline, and beta= where the decay is not 0.999.
std::string demo_label(const Config& config, std::vector<std::string>* keys) {
  const auto read = [&](const std::string& path) {
    keys->push_back(path);
    return label_value(config.value(path));
  };
  const std::string transport = read("strategy.demo.transport");
  std::string text;
  if (transport == "dct_topk") {
    text = "dct_topk k=" + read("compressor.dct_topk.topk");
    if (const std::string chunk = read("compressor.dct_topk.chunk"); chunk != "64") text += " chunk=" + chunk;
  } else {
    text = compressor_label(config, transport, keys);
  }
  if (const std::string wire = read("compressor.dct_topk.wire"); wire != "reference") text += " wire=" + wire;
  if (transport == "dct_topk") text += exchange_label(config, transport, keys);
  if (const std::string pipeline = read("strategy.demo.pipeline"); pipeline != "none") text += " " + pipeline;
  if (const std::string decay = read("strategy.demo.compression_decay"); decay != "0.999") text += " beta=" + decay;
  return text;
}

}  // namespace

StrategyInfo demo_strategy() {
  return {
      .name = "demo",
      .description = "DeMo/DisTrO: decoupled momentum, its fast components sent (DCT top-k by default), "
                     "update by the sign of their mean",
      .parameters = demo_schema().keys(),
      .create = [](const StrategySetup& setup) -> std::unique_ptr<Strategy> {
        return std::make_unique<Demo>(setup, demo_options(setup.config));
      },
      .syncs = demo_syncs,
      .transport = [](const Config& config) { return demo_options(config).transport; },
      .examples = {{"demo", {"strategy.name=demo", "strategy.demo.compression_chunk=4", "strategy.demo.compression_topk=3",
                             "strategy.demo.weight_decay=0.01"}},
                   {"demo_stale_1bit", {"strategy.name=demo", "strategy.demo.compression_chunk=4",
                                        "strategy.demo.wire=compact_1bit", "strategy.demo.pipeline=stale"}},
                   {"demo_topk_transport",
                    {"strategy.name=demo", "strategy.demo.transport=topk", "compressor.topk.ratio=0.2"}}},
      .label_names_optimizer = false,
      .custom_label = demo_label};
}

}  // namespace lowcomm::strategy
