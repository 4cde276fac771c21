// `noloco`: NoLoCo (Kolehmainen et al., arXiv 2506.10911; the public code gensyn-ai/noloco), DiLoCo
// without any all-reduce. Every step is an inner step of the local optimizer (optimizer.*). Every
// H steps each rank meets one other, drawn by a random pairing of the ranks that changes every
// round (gossip_matching.hpp), and the pair exchanges point to point (Communicator::exchange_pairs):
//     θ ← the rank's parameters after its H inner steps;  φ its slow weights (the last outer result)
//     θ̄, φ̄ ← the pair's means (a rank without a partner: its own values)
//     δ ← α·δ + β·(θ̄ − φ̄) + γ·(φ̄ − φ)           outer momentum α, outer lr β, pull toward the pair γ
//     φ ← φ + δ;  parameters ← φ
// This is the code's update δ ← α·δ − β·mean(φ − θ) − γ·(φ − mean φ), heavy-ball as there. With
// γ = β (the published 0.7 and 0.7) the φ̄ terms cancel: δ ← α·δ + β·(θ̄ − φ), so only θ travels;
// otherwise φ travels too. Every rank keeps its own φ, δ and optimizer state: the replicas are
// never made equal, only pulled together.
//
// A rank sits a round out (a local outer step with its own θ) when the pairing leaves it alone
// (W odd) or its partner is absent from the round (cluster.dropout, cluster.rank.*.absent_steps);
// an absent rank sits out too.
#include <fmt/format.h>

#include <memory>
#include <string>
#include <vector>

#include "builtins.hpp"
#include "lowcomm/strategy/gossip_matching.hpp"
#include "../tensor_buffers.hpp"
#include "lowcomm/comm/network_config.hpp"
#include "lowcomm/core/timeline.hpp"
#include "lowcomm/error.hpp"
#include "lowcomm/kernels/elementwise.hpp"
#include "lowcomm/optim/registry.hpp"

namespace lowcomm::strategy {

namespace {

struct NolocoOptions {
  std::int64_t inner_steps = 50;  // H
  double outer_lr = 0.7;          // β
  double pull = 0.7;              // γ
  double outer_momentum = 0.5;    // α
};

// strategy.noloco.*, declared once (config/options_schema.hpp); the defaults are the public code's.
const OptionsSchema<NolocoOptions>& noloco_schema() {
  static const auto schema =
      OptionsSchema<NolocoOptions>()
          .field("inner_steps", &NolocoOptions::inner_steps, "H: inner steps between gossip rounds", {.min = 1.0})
          .field("outer_lr", &NolocoOptions::outer_lr, "beta: the step toward the pair's mean change", {.min = 0.0})
          .field("pull", &NolocoOptions::pull,
                 "gamma: the pull of the slow weights toward the pair's mean (equal to outer_lr: only the fast "
                 "weights travel)",
                 {.min = 0.0})
          .field("outer_momentum", &NolocoOptions::outer_momentum, "alpha: heavy-ball outer momentum, in [0, 1]",
                 {.min = 0.0, .max = 1.0});
  return schema;
}

NolocoOptions noloco_options(const Config& config) {
  return noloco_schema().read(ComponentParameters(config, "strategy.noloco"));
}

// A gossip round every H steps of the fast weights, and of the slow ones when γ ≠ β: what
// `lowcomm plan` prices.
std::vector<PlannedSync> noloco_syncs(const Config& config, std::span<const TensorInfo> tensors) {
  const NolocoOptions options = noloco_options(config);
  std::vector<PlannedSync> syncs;
  for (int exchange = 0; exchange < (options.pull == options.outer_lr ? 1 : 2); ++exchange) {
    PlannedSync& sync = syncs.emplace_back();
    sync.count = tensors.size();
    sync.period = static_cast<std::uint64_t>(options.inner_steps);
    sync.pairs = true;
  }
  return syncs;
}

class Noloco final : public Strategy {
 public:
  explicit Noloco(const StrategySetup& setup)
      : options_(noloco_options(setup.config)),
        comm_(setup.comm),
        seed_(setup.seed),
        participation_(participation_from_config(setup.config, setup.comm.size(), setup.seed)),
        backend_(setup.execution.backend),
        optimizer_(make_optimizer(setup.config, {.execution = setup.execution, .tensors = setup.tensors})),
        slow_(setup.tensors, backend_),
        momentum_(setup.tensors, backend_),
        fast_(setup.tensors, backend_),
        partner_fast_(setup.tensors, backend_),
        mean_fast_(setup.tensors, backend_),
        mean_slow_(setup.tensors, backend_) {
    if (setup.config.has("compressor.name") && setup.config.get_string("compressor.name") != "none") {
      throw ConfigError(fmt::format("strategy noloco sends its weights point to point, uncompressed: set "
                                    "compressor.name = \"none\" (got \"{}\")",
                                    setup.config.get_string("compressor.name")));
    }
    if (!pull_cancels()) partner_slow_ = TensorBuffers(setup.tensors, backend_);
  }

  std::string_view name() const override { return "noloco"; }

  StrategyStepReport step(std::uint64_t step, double lr, std::span<const std::span<float>> params,
                          std::span<const std::span<const float>> grads) override {
    if (!anchored_) {  // the first slow weights: the starting point, the same on every rank
      copy(params, slow_.views());
      anchored_ = true;
    }
    StrategyStepReport report;
    MeasuredSpan update("compute", "update");
    optimizer_->step(params, grads, lr);
    report.update_s = update.stop();
    const auto h = static_cast<std::uint64_t>(options_.inner_steps);
    if ((step + 1) % h == 0) {
      bool paired = false;
      report.sync = exchange((step + 1) / h - 1, step, params, paired);
      report.synchronized = true;
      MeasuredSpan outer("compute", "outer step");
      outer_step(paired, params);
      report.update_s += outer.stop();
    }
    return report;
  }

  void save_state(StateDict& state, std::string_view prefix) const override {
    const std::string p(prefix);
    optimizer_->save_state(state, p + "optimizer/");
    slow_.save(state, p + "slow");
    momentum_.save(state, p + "momentum");
  }
  void load_state(const StateDict& state, std::string_view prefix) override {
    const std::string p(prefix);
    optimizer_->load_state(state, p + "optimizer/");
    slow_.load(state, p + "slow");
    momentum_.load(state, p + "momentum");
    anchored_ = true;
  }

 private:
  bool pull_cancels() const { return options_.pull == options_.outer_lr; }

  void copy(std::span<const std::span<float>> from, std::span<const std::span<float>> to) const {
    for (std::size_t i = 0; i < from.size(); ++i) kernels::scale(backend_, 1.0f, from[i], to[i]);
  }

  // mean ← 0.5·mine + 0.5·theirs (each product rounded), or mine when there is no partner.
  void pair_mean(bool paired, std::span<const float> mine, std::span<const float> theirs, std::span<float> mean) const {
    if (!paired) {
      kernels::scale(backend_, 1.0f, mine, mean);
      return;
    }
    kernels::scale(backend_, 0.5f, theirs, mean);
    kernels::scale_add(backend_, 0.5f, mine, mean, mean);
  }

  // Round `round`'s meeting, at the end of step `step`: θ (and φ when γ ≠ β) swapped with this
  // rank's partner, if it has one (`paired`).
  SyncReport exchange(std::uint64_t round, std::uint64_t step, std::span<const std::span<float>> params,
                      bool& paired) {
    const std::vector<bool> present = participation_.present(step);
    const std::vector<int> partners = gossip_matching(comm_.size(), seed_, round, present);
    paired = partners[static_cast<std::size_t>(comm_.rank())] >= 0;
    copy(params, fast_.views());

    SyncReport report;
    report.present = present.empty() || present[static_cast<std::size_t>(comm_.rank())];
    const CommCounters before = comm_.totals();
    comm_.exchange_pairs(partners, std::span<const float>(fast_.flat()), partner_fast_.flat());
    report.rounds = 1;
    if (!pull_cancels()) {
      comm_.exchange_pairs(partners, std::span<const float>(slow_.flat()), partner_slow_.flat());
      report.rounds = 2;
    }
    report.comm = comm_.totals() - before;
    report.payload_bytes = report.comm.bytes_sent;
    return report;
  }

  // The outer step on what exchange() left in fast_ and partner_fast_ (and partner_slow_).
  void outer_step(bool paired, std::span<const std::span<float>> params) {
    const std::span<float> slow = slow_.flat(), delta = momentum_.flat();
    const std::span<float> mean_fast = mean_fast_.flat(), mean_slow = mean_slow_.flat();
    pair_mean(paired, fast_.flat(), partner_fast_.flat(), mean_fast);
    pair_mean(paired && !pull_cancels(), slow, pull_cancels() ? slow : partner_slow_.flat(), mean_slow);
    // δ ← α·δ + β·(θ̄ − φ̄) + γ·(φ̄ − φ), term by term; fast_ and partner_fast_ serve as scratch.
    const std::span<float> change = fast_.flat(), pull = partner_fast_.flat();
    kernels::subtract(backend_, mean_fast, mean_slow, change);
    kernels::subtract(backend_, mean_slow, slow, pull);
    kernels::scale(backend_, static_cast<float>(options_.outer_momentum), delta, delta);
    kernels::scale_add(backend_, static_cast<float>(options_.outer_lr), change, delta, delta);
    kernels::scale_add(backend_, static_cast<float>(options_.pull), pull, delta, delta);
    kernels::scale_add(backend_, 1.0f, delta, slow, slow);
    copy(slow_.views(), params);
  }

  NolocoOptions options_;
  Communicator& comm_;
  std::uint64_t seed_;
  Participation participation_;
  kernels::Backend backend_;
  std::unique_ptr<Optimizer> optimizer_;
  TensorBuffers slow_, momentum_;            // φ and δ: state
  TensorBuffers fast_, partner_fast_;        // θ and the partner's
  TensorBuffers partner_slow_;               // the partner's φ, when γ ≠ β
  TensorBuffers mean_fast_, mean_slow_;      // θ̄ and φ̄
  bool anchored_ = false;                    // slow_ set
};

}  // namespace

StrategyInfo noloco_strategy() {
  return {.name = "noloco",
          .description = "NoLoCo: DiLoCo without all-reduce; every inner_steps each rank averages with one random "
                         "partner, point to point, and takes a heavy-ball outer step pulled toward the pair",
          .parameters = noloco_schema().keys(),
          .create = [](const StrategySetup& setup) -> std::unique_ptr<Strategy> {
            return std::make_unique<Noloco>(setup);
          },
          .syncs = noloco_syncs,
          .transport = {},
          .examples = {{"noloco", {"strategy.name=noloco", "strategy.noloco.inner_steps=2"}}},
          .label = {{"inner_steps", "H"}, {.key = "pull", .shown_as = "pull", .hidden_at_key = "outer_lr"}}};
}

}  // namespace lowcomm::strategy
