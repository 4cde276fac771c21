// `onebit_adam`: 1-bit Adam (Tang et al., ICML 2021; DeepSpeed's runtime/fp16/onebit/adam.py and
// the compressed all-reduce of runtime/comm/nccl.py). Adam's variance stops changing early in
// training, so after a warm-up it is frozen and only the momentum travels, as one sign bit per
// entry with error feedback on both sides of a two-phase exchange:
//
//   warm-up (step < freeze_step): ḡ ← the ranks' mean gradient (an fp32 all-reduce)
//       m ← β1·m + (1 − β1)·ḡ ;  v ← β2·v + (1 − β2)·ḡ²
//   compression (step ≥ freeze_step), v frozen:
//       m ← β1·m + (1 − β1)·g                    this rank's own gradient
//       m ← compressed_mean(m)                   below
//   both: u ← m / (√v + ε) + λ·x ;  x ← x − η·u   (no bias correction, as DeepSpeed's)
//
// compressed_mean is DeepSpeed's compressed all-reduce (onebit_all_reduce.hpp) on the whole model
// as one vector.
//
// On one rank nothing is compressed (the momentum stays exact), as in DeepSpeed.
//
// Differences from DeepSpeed: its first step() call only allocates the error buffers and updates
// nothing, so its freeze_step F is lowcomm's F − 1 (lowcomm's first step is DeepSpeed's second);
// the model is one vector, as DeepSpeed's fp16 optimizer flattens a parameter group (its fp32 path
// compresses each tensor on its own); the arithmetic runs on the host (CUDA's managed memory).
#include <fmt/format.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "builtins.hpp"
#include "../flat_adam.hpp"
#include "../onebit_all_reduce.hpp"
#include "lowcomm/compress/traffic.hpp"
#include "lowcomm/core/timeline.hpp"
#include "lowcomm/error.hpp"

namespace lowcomm::strategy {

namespace {

struct OnebitAdamOptions {
  std::int64_t freeze_step = 100000;  // DeepSpeed's default
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.0;

  FlatAdamOptions adam() const { return {beta1, beta2, eps, weight_decay}; }
};

// strategy.onebit_adam.*, declared once (config/options_schema.hpp); the defaults are DeepSpeed's.
const OptionsSchema<OnebitAdamOptions>& onebit_adam_schema() {
  static const auto schema = [] {
    OptionsSchema<OnebitAdamOptions> s;
    s.field("freeze_step", &OnebitAdamOptions::freeze_step,
            "exact Adam steps (dense all-reduce) before the variance freezes and the momentum travels as signs",
            {.min = 0.0});
    return flat_adam_fields(s);
  }();
  return schema;
}

OnebitAdamOptions onebit_adam_options(const Config& config) {
  OnebitAdamOptions options = onebit_adam_schema().read(ComponentParameters(config, "strategy.onebit_adam"));
  check_flat_adam(options.adam(), "strategy.onebit_adam");
  return options;
}

// What `lowcomm plan` prices: the compression stage, every step.
std::vector<PlannedSync> onebit_adam_syncs(const Config& config, std::span<const TensorInfo> tensors) {
  (void)onebit_adam_options(config);  // refuses what create would
  std::uint64_t parameters = 0;
  for (const TensorInfo& t : tensors) parameters += static_cast<std::uint64_t>(t.numel());
  std::vector<PlannedSync> syncs(1);
  syncs[0].count = tensors.size();
  syncs[0].price = [parameters](int world_size, const CommunicatorOptions& options) {
    return OnebitAllReduce::price(parameters, world_size, options);
  };
  return syncs;
}

class OnebitAdam final : public Strategy {
 public:
  explicit OnebitAdam(const StrategySetup& setup)
      : options_(onebit_adam_options(setup.config)),
        comm_(setup.comm),
        adam_(static_cast<std::size_t>(total_numel(setup.tensors)), options_.adam()),
        exchange_(setup.comm, static_cast<std::size_t>(total_numel(setup.tensors))) {
    refuse_compressor_and_absent_peers(setup, "onebit_adam");
  }

  std::string_view name() const override { return "onebit_adam"; }

  StrategyStepReport step(std::uint64_t step, double lr, std::span<const std::span<float>> params,
                          std::span<const std::span<const float>> grads) override {
    if (!(lr >= 0) || !std::isfinite(lr)) throw Error(fmt::format("onebit_adam: learning rate {} at step {}", lr, step));
    StrategyStepReport report;
    report.synchronized = true;
    const std::span<float> gradient = adam_.take_gradient(grads);
    const CommCounters before = comm_.totals();
    if (step < static_cast<std::uint64_t>(options_.freeze_step)) {  // the warm-up: exact Adam
      comm_.all_reduce(gradient, ReduceOp::Average);
      report.sync.payload_bytes = gradient.size() * sizeof(float);
      report.sync.rounds = 1;
      MeasuredSpan update("compute", "update");
      adam_.update_moments(gradient);
      report.update_s = update.stop();
    } else {
      MeasuredSpan momentum("compute", "update");
      adam_.update_momentum(gradient);
      report.update_s = momentum.stop();
      if (comm_.size() > 1) {  // alone, DeepSpeed keeps the exact momentum (adam.py: `if self.size > 1`)
        report.sync.payload_bytes = exchange_.run(adam_.momentum());
        report.sync.rounds = 2;
      }
    }
    report.sync.comm = comm_.totals() - before;
    MeasuredSpan update("compute", "update");
    adam_.apply(params, static_cast<float>(lr));
    report.update_s += update.stop();
    return report;
  }

  void save_state(StateDict& state, std::string_view prefix) const override {
    adam_.save_state(state, std::string(prefix));
    exchange_.save_state(state, std::string(prefix));
  }
  void load_state(const StateDict& state, std::string_view prefix) override {
    adam_.load_state(state, std::string(prefix));
    exchange_.load_state(state, std::string(prefix));
  }

 private:
  OnebitAdamOptions options_;
  Communicator& comm_;
  FlatAdam adam_;             // the moments: state
  OnebitAllReduce exchange_;  // its errors: state
};

}  // namespace

StrategyInfo onebit_adam_strategy() {
  return {.name = "onebit_adam",
          .description = "1-bit Adam: exact Adam for freeze_step steps, then the variance frozen and the momentum "
                         "sent as scaled signs through a two-phase exchange with error feedback on both sides",
          .parameters = onebit_adam_schema().keys(),
          .create = [](const StrategySetup& setup) -> std::unique_ptr<Strategy> {
            return std::make_unique<OnebitAdam>(setup);
          },
          .syncs = onebit_adam_syncs,
          .transport = [](const Config&) { return std::string(kOnebitTransport); },
          .examples = {{"onebit_adam", {"strategy.name=onebit_adam", "strategy.onebit_adam.freeze_step=3"}}},
          .label = {{"freeze_step", "freeze"}, {"beta2", "beta2", "0.999"}},
          .label_names_optimizer = false};  // its own Adam
}

}  // namespace lowcomm::strategy
