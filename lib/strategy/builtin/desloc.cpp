// `desloc`: DES-LOC (Iacob et al., arXiv 2505.22549), Local Adam whose parameters, first moments
// and second moments are averaged across ranks on periods of their own, K_x ≤ K_u ≤ K_v being
// usual (the paper recommends K_u = 3·K_x, K_v = 6·K_x), with no outer optimizer. Step s
// (t = s + 1 counting from 1) on each rank, before the local AdamW update with its own gradient:
//     t mod K_u = 0:  m ← mean over ranks of m
//     t mod K_v = 0:  v ← mean over ranks of v
//     t mod K_x = 0:  x ← mean over ranks of x
//     then AdamW (optimizer.*) on the local gradient, as every rank does every step.
// Each average goes through compressor.* as the change since the quantity's previous average
// (identical on every rank): q ← r + mean(q − r), r ← q. With compressor none that is the mean up
// to float rounding; a lossy compressor compresses the drift, as DiLoCo's pseudo-gradient, not
// the values themselves (most of which a top-k would otherwise zero).
#include <fmt/format.h>

#include <memory>
#include <string>
#include <vector>

#include "builtins.hpp"
#include "../compressed_sync.hpp"
#include "../tensor_buffers.hpp"
#include "lowcomm/core/timeline.hpp"
#include "lowcomm/error.hpp"
#include "lowcomm/kernels/elementwise.hpp"
#include "lowcomm/optim/registry.hpp"

namespace lowcomm::strategy {

namespace {

struct DeslocOptions {
  std::int64_t param_period = 16;          // K_x
  std::int64_t first_moment_period = 48;   // K_u
  std::int64_t second_moment_period = 96;  // K_v
};

// strategy.desloc.*, declared once (config/options_schema.hpp).
const OptionsSchema<DeslocOptions>& desloc_schema() {
  static const auto schema =
      OptionsSchema<DeslocOptions>()
          .field("param_period", &DeslocOptions::param_period, "K_x: steps between averages of the parameters",
                 {.min = 1.0})
          .field("first_moment_period", &DeslocOptions::first_moment_period,
                 "K_u: steps between averages of AdamW's first moment (the paper: 3 K_x)", {.min = 1.0})
          .field("second_moment_period", &DeslocOptions::second_moment_period,
                 "K_v: steps between averages of AdamW's second moment (the paper: 6 K_x)", {.min = 1.0});
  return schema;
}

DeslocOptions desloc_options(const Config& config) {
  return desloc_schema().read(ComponentParameters(config, "strategy.desloc"));
}

// What is averaged, in the order a step averages them, with its period and its name in the
// optimizer's state ("" for the parameters).
struct Averaged {
  const char* name;        // in the checkpoint and in messages
  const char* state_name;  // Optimizer::state_views; "" for the parameters
  std::int64_t DeslocOptions::*period;
};
constexpr Averaged kAveraged[] = {{"exp_avg", "exp_avg", &DeslocOptions::first_moment_period},
                                  {"exp_avg_sq", "exp_avg_sq", &DeslocOptions::second_moment_period},
                                  {"params", "", &DeslocOptions::param_period}};
constexpr std::size_t kParams = 2;  // the parameters' place in kAveraged
static_assert(kAveraged[kParams].state_name[0] == '\0');

// The three exchanges, in kAveraged's order, each over every tensor.
std::vector<PlannedSync> desloc_syncs(const Config& config, std::span<const TensorInfo> tensors) {
  const DeslocOptions options = desloc_options(config);
  std::vector<PlannedSync> syncs;
  for (const Averaged& averaged : kAveraged) {
    PlannedSync sync = planned_sync(config, tensors.size());
    sync.period = static_cast<std::uint64_t>(options.*averaged.period);
    syncs.push_back(std::move(sync));
  }
  return syncs;
}

class Desloc final : public Strategy {
 public:
  explicit Desloc(const StrategySetup& setup)
      : options_(desloc_options(setup.config)),
        backend_(setup.execution.backend),
        optimizer_(make_optimizer(setup.config, {.execution = setup.execution, .tensors = setup.tensors})),
        drift_(setup.tensors, backend_),
        mean_(setup.tensors, backend_) {
    if (optimizer_->name() != "adamw") {
      throw ConfigError(fmt::format("strategy desloc is Local Adam with its moments averaged on their own periods: "
                                    "set optimizer.name = \"adamw\" (got \"{}\")", optimizer_->name()));
    }
    for (PlannedSync& planned : desloc_syncs(setup.config, setup.tensors)) {
      syncs_.push_back(make_compressed_sync(setup, std::move(planned)));
      references_.emplace_back(setup.tensors, backend_);
    }
  }

  std::string_view name() const override { return "desloc"; }

  StrategyStepReport step(std::uint64_t step, double lr, std::span<const std::span<float>> params,
                          std::span<const std::span<const float>> grads) override {
    if (!anchored_) {  // the parameters' first reference: the starting point, the same on every rank
      for (std::size_t i = 0; i < params.size(); ++i) kernels::scale(backend_, 1.0f, params[i], references_[kParams].views()[i]);
      anchored_ = true;
    }
    StrategyStepReport report;
    const std::uint64_t t = step + 1;
    for (std::size_t q = 0; q < std::size(kAveraged); ++q) {
      if (t % static_cast<std::uint64_t>(options_.*kAveraged[q].period) != 0) continue;
      const std::string_view state_name = kAveraged[q].state_name;
      std::vector<std::span<float>> values =
          state_name.empty() ? std::vector<std::span<float>>(params.begin(), params.end())
                             : optimizer_->state_views(state_name);
      report.sync += average(step, q, values);
      report.synchronized = true;
    }
    MeasuredSpan update("compute", "update");
    optimizer_->step(params, grads, lr);
    report.update_s = update.stop();
    return report;
  }

  void save_state(StateDict& state, std::string_view prefix) const override {
    const std::string p(prefix);
    optimizer_->save_state(state, p + "optimizer/");
    for (std::size_t q = 0; q < syncs_.size(); ++q) {
      syncs_[q]->compressor().save_state(state, fmt::format("{}compressor/{}/", p, kAveraged[q].name));
      references_[q].save(state, fmt::format("{}reference/{}", p, kAveraged[q].name));
    }
  }
  void load_state(const StateDict& state, std::string_view prefix) override {
    const std::string p(prefix);
    optimizer_->load_state(state, p + "optimizer/");
    for (std::size_t q = 0; q < syncs_.size(); ++q) {
      syncs_[q]->compressor().load_state(state, fmt::format("{}compressor/{}/", p, kAveraged[q].name));
      references_[q].load(state, fmt::format("{}reference/{}", p, kAveraged[q].name));
    }
    anchored_ = true;
  }

 private:
  // values ← reference + mean over ranks of (values − reference); reference ← values. Before the
  // optimizer's first step its moments do not exist yet: they are zero on every rank, and zeros
  // are exchanged (so every average costs its bytes, as `plan` prices them).
  SyncReport average(std::uint64_t step, std::size_t q, std::span<const std::span<float>> values) {
    const std::span<const std::span<float>> reference = references_[q].views();
    const bool exists = !values.empty();
    for (std::size_t i = 0; i < drift_.views().size(); ++i) {
      if (exists) {
        kernels::subtract(backend_, values[i], reference[i], drift_.views()[i]);
      } else {
        kernels::fill(backend_, drift_.views()[i], 0.0f);
      }
    }
    const SyncReport report = syncs_[q]->run(step, drift_.const_views(), mean_.views());
    if (exists) {
      for (std::size_t i = 0; i < values.size(); ++i) {
        kernels::scale_add(backend_, 1.0f, mean_.views()[i], reference[i], values[i]);
        kernels::scale(backend_, 1.0f, values[i], reference[i]);
      }
    }
    return report;
  }

  DeslocOptions options_;
  kernels::Backend backend_;
  std::unique_ptr<Optimizer> optimizer_;
  std::vector<std::unique_ptr<CompressedAllReduce>> syncs_;  // kAveraged's order
  std::vector<TensorBuffers> references_;                     // the last averages, kAveraged's order
  TensorBuffers drift_, mean_;                                // one exchange's input and output
  bool anchored_ = false;                                     // references_ of the parameters set
};

}  // namespace

StrategyInfo desloc_strategy() {
  return {.name = "desloc",
          .description = "DES-LOC: Local AdamW, parameters averaged every param_period steps, the first and second "
                         "moments on periods of their own, through compressor.*",
          .parameters = desloc_schema().keys(),
          .create = [](const StrategySetup& setup) -> std::unique_ptr<Strategy> {
            return std::make_unique<Desloc>(setup);
          },
          .syncs = desloc_syncs,
          .transport = {},  // compressor.name
          .examples = {{"desloc", {"strategy.name=desloc", "optimizer.name=adamw", "strategy.desloc.param_period=2",
                                      "strategy.desloc.first_moment_period=3",
                                      "strategy.desloc.second_moment_period=6"}}},
          .label = {{"param_period", "Kx"}, {"first_moment_period", "Ku"}, {"second_moment_period", "Kv"}}};
}

}  // namespace lowcomm::strategy
