// `zero_one_adam`: 0/1 Adam (Lu et al., 2022; DeepSpeed's runtime/fp16/onebit/zoadam.py). Like
// 1-bit Adam it sends one sign bit per entry through DeepSpeed's compressed all-reduce
// (onebit_all_reduce.hpp), but it refreshes the variance on a thinning schedule instead of
// freezing it once, and after the freeze it skips synchronisation: ranks take local steps and
// exchange their accumulated update at intervals that grow. Counting steps t = 1, 2, ...:
//
//   until var_freeze_step (the variance still moves):
//     t % var_interval = 0:  ḡ ← mean over ranks of g (fp32 all-reduce) ;  v, m ← Adam's, from ḡ
//                            after var_update_scaler such steps var_interval doubles
//     otherwise:             m ← β1·m + (1 − β1)·compressed_mean(g)       (v unchanged)
//   after it (v frozen):     m ← β1·m + (1 − β1)·g (this rank's) ;  Σ ← Σ + η
//   every step:              u ← m / (√v + ε) + λ·x ;  x ← x − η·u ;  after the freeze, c ← c − η·u
//   after the freeze, when t % local_step_interval = 0 (every local_step_scaler steps the interval
//   doubles, up to local_step_clipper):
//     x ← x − c ;  c ← compressed_mean(c·(√v + ε)) ;  m ← −c / Σ ;  x ← x + c / (√v + ε) ;  c, Σ ← 0
//
// So the ranks' weights differ between synchronisations and agree again at each. The gradient
// and the accumulated update share one pair of error buffers, zeroed at the freeze, as in DeepSpeed. On one rank
// nothing is compressed and, as in DeepSpeed, a step that would send a 1-bit gradient leaves m as
// it is.
//
// Differences from DeepSpeed: its first step() call only allocates buffers, and its step counter
// (which drives every interval above) counts that call; lowcomm's t is the paper's, one less, so
// DeepSpeed's var_freeze_step F is lowcomm's F − 1. The model is one vector (DeepSpeed's fp16
// optimizer's flat group); the arithmetic runs on the host. A synchronisation after local steps
// whose learning rates summed to 0 keeps m (DeepSpeed divides by zero).
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "builtins.hpp"
#include "../flat_adam.hpp"
#include "../onebit_all_reduce.hpp"
#include "lowcomm/core/timing.hpp"
#include "lowcomm/error.hpp"

namespace lowcomm::strategy {

namespace {

struct ZeroOneAdamOptions {
  std::int64_t var_freeze_step = 100000;  // DeepSpeed's defaults
  std::int64_t var_update_scaler = 16;
  std::int64_t local_step_scaler = 32678;
  std::int64_t local_step_clipper = 16;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.0;

  FlatAdamOptions adam() const { return {beta1, beta2, eps, weight_decay}; }
};

// strategy.zero_one_adam.*, declared once (config/options_schema.hpp); the defaults are DeepSpeed's.
const OptionsSchema<ZeroOneAdamOptions>& zero_one_adam_schema() {
  static const auto schema = [] {
    OptionsSchema<ZeroOneAdamOptions> s;
    s.field("var_freeze_step", &ZeroOneAdamOptions::var_freeze_step,
            "the last step whose variance may change; after it, local steps", {.min = 0.0})
        .field("var_update_scaler", &ZeroOneAdamOptions::var_update_scaler,
               "variance refreshes between doublings of their interval", {.min = 1.0})
        .field("local_step_scaler", &ZeroOneAdamOptions::local_step_scaler,
               "steps between doublings of the interval of synchronisations after the freeze", {.min = 1.0})
        .field("local_step_clipper", &ZeroOneAdamOptions::local_step_clipper,
               "the longest interval between synchronisations after the freeze", {.min = 1.0});
    return flat_adam_fields(s);
  }();
  return schema;
}

ZeroOneAdamOptions zero_one_adam_options(const Config& config) {
  ZeroOneAdamOptions options = zero_one_adam_schema().read(ComponentParameters(config, "strategy.zero_one_adam"));
  check_flat_adam(options.adam(), "strategy.zero_one_adam");
  return options;
}

// What `lowcomm plan` prices: the steady state long after the freeze, one 1-bit exchange every
// local_step_clipper steps.
std::vector<PlannedSync> zero_one_adam_syncs(const Config& config, std::span<const TensorInfo> tensors) {
  const ZeroOneAdamOptions options = zero_one_adam_options(config);
  const auto parameters = static_cast<std::uint64_t>(total_numel(tensors));
  std::vector<PlannedSync> syncs(1);
  syncs[0].count = tensors.size();
  syncs[0].period = static_cast<std::uint64_t>(options.local_step_clipper);
  syncs[0].price = [parameters](int world_size, const CommunicatorOptions& network) {
    return OnebitAllReduce::price(parameters, world_size, network);
  };
  return syncs;
}

// The schedule's counters: state.
struct Schedule {
  std::int64_t var_interval = 1, var_counter = 0;
  std::int64_t local_step_interval = 1, local_step_counter = 0;
  double lr_sum = 0.0;  // Σ: the learning rates of the local steps since the last synchronisation
  bool frozen = false;
};

class ZeroOneAdam final : public Strategy {
 public:
  explicit ZeroOneAdam(const StrategySetup& setup)
      : options_(zero_one_adam_options(setup.config)),
        comm_(setup.comm),
        n_(static_cast<std::size_t>(total_numel(setup.tensors))),
        adam_(n_, options_.adam()),
        exchange_(setup.comm, n_),
        accumulated_(n_, 0.0f) {
    refuse_compressor_and_absent_peers(setup, "zero_one_adam");
  }

  std::string_view name() const override { return "zero_one_adam"; }

  StrategyStepReport step(std::uint64_t step, double lr, std::span<const std::span<float>> params,
                          std::span<const std::span<const float>> grads) override {
    if (!(lr >= 0) || !std::isfinite(lr)) throw Error(fmt::format("zero_one_adam: learning rate {} at step {}", lr, step));
    const auto t = static_cast<std::int64_t>(step) + 1;
    const bool alone = comm_.size() == 1;
    StrategyStepReport report;
    const CommCounters before = comm_.totals();
    const std::span<float> gradient = adam_.take_gradient(grads);
    const auto start = SteadyClock::now();
    if (!schedule_.frozen && t % schedule_.var_interval == 0) {  // a variance refresh, on the exact mean
      comm_.all_reduce(gradient, ReduceOp::Average);
      report.sync.payload_bytes = n_ * sizeof(float);
      report.sync.rounds = 1;
      adam_.update_moments(gradient);
    } else if (!schedule_.frozen) {
      if (!alone) {
        report.sync.payload_bytes = exchange_.run(gradient);
        report.sync.rounds = 2;
        adam_.update_momentum(gradient);
      }
    } else {
      adam_.update_momentum(gradient);
      schedule_.lr_sum += lr;
    }
    adam_.apply(params, static_cast<float>(lr), schedule_.frozen ? std::span<float>(accumulated_) : std::span<float>());
    if (schedule_.frozen && t % schedule_.local_step_interval == 0) {
      report.sync.payload_bytes = synchronise(params);
      report.sync.rounds = alone ? 0 : 2;
    }
    advance_schedule(t);
    report.sync.comm = comm_.totals() - before;
    report.synchronized = report.sync.comm.calls > 0;
    report.update_s = seconds_since(start) - report.sync.comm.measured_s;  // the arithmetic between the exchanges
    return report;
  }

  void save_state(StateDict& state, std::string_view prefix) const override {
    const std::string p(prefix);
    adam_.save_state(state, p);
    exchange_.save_state(state, p);
    state.put(p + "momentum_accumulator", std::span<const float>(accumulated_));
    state.put(p + "var_interval", schedule_.var_interval);
    state.put(p + "var_counter", schedule_.var_counter);
    state.put(p + "local_step_interval", schedule_.local_step_interval);
    state.put(p + "local_step_counter", schedule_.local_step_counter);
    state.put(p + "frozen", schedule_.frozen ? 1 : 0);
    state.put(p + "lr_sum_bits", std::bit_cast<std::int64_t>(schedule_.lr_sum));  // the double, bit for bit
  }
  void load_state(const StateDict& state, std::string_view prefix) override {
    const std::string p(prefix);
    adam_.load_state(state, p);
    exchange_.load_state(state, p);
    const std::vector<float>& accumulated = state.floats(p + "momentum_accumulator");
    if (accumulated.size() != n_) {
      throw Error(fmt::format("zero_one_adam: state '{}momentum_accumulator' holds {} values; this model has {}", p,
                              accumulated.size(), n_));
    }
    accumulated_ = accumulated;
    Schedule s;
    s.var_interval = state.integer(p + "var_interval");
    s.var_counter = state.integer(p + "var_counter");
    s.local_step_interval = state.integer(p + "local_step_interval");
    s.local_step_counter = state.integer(p + "local_step_counter");
    s.frozen = state.integer(p + "frozen") != 0;
    s.lr_sum = std::bit_cast<double>(state.integer(p + "lr_sum_bits"));
    if (s.var_interval < 1 || s.local_step_interval < 1 || s.local_step_interval > options_.local_step_clipper ||
        s.var_counter < 0 || s.var_counter >= options_.var_update_scaler || s.local_step_counter < 0 ||
        s.local_step_counter >= options_.local_step_scaler || !(s.lr_sum >= 0) || !std::isfinite(s.lr_sum)) {
      throw Error(fmt::format("zero_one_adam: the schedule in state '{}' is damaged (intervals {} and {}, counters "
                              "{} and {}, learning-rate sum {})",
                              p, s.var_interval, s.local_step_interval, s.var_counter, s.local_step_counter, s.lr_sum));
    }
    schedule_ = s;
  }

 private:
  // x ← x − c ; c ← compressed_mean(c·(√v + ε)) ; m ← −c/Σ ; x ← x + c/(√v + ε) ; c, Σ ← 0.
  // Returns this rank's payload bytes.
  std::uint64_t synchronise(std::span<const std::span<float>> params) {
    const auto eps = static_cast<float>(options_.eps);
    const std::span<const float> v = adam_.variance();
    std::size_t i = 0;
    for (const std::span<float> x : params) {
      for (float& value : x) value += -1.0f * accumulated_[i++];
    }
    for (std::size_t j = 0; j < n_; ++j) accumulated_[j] *= std::sqrt(v[j]) + eps;
    const std::uint64_t bytes = comm_.size() > 1 ? exchange_.run(accumulated_) : 0;
    if (schedule_.lr_sum > 0.0) {
      const auto lr_sum = static_cast<float>(schedule_.lr_sum);
      const std::span<float> m = adam_.momentum();
      for (std::size_t j = 0; j < n_; ++j) m[j] = -(accumulated_[j] / lr_sum);
    }
    i = 0;
    for (const std::span<float> x : params) {
      for (float& value : x) {
        value += accumulated_[i] / (std::sqrt(v[i]) + eps);
        ++i;
      }
    }
    std::ranges::fill(accumulated_, 0.0f);
    schedule_.lr_sum = 0.0;
    return bytes;
  }

  // The intervals after step t, then the freeze once t passes var_freeze_step.
  void advance_schedule(std::int64_t t) {
    Schedule& s = schedule_;
    if (!s.frozen) {
      if (t % s.var_interval == 0 && ++s.var_counter >= options_.var_update_scaler) {
        s.var_counter = 0;
        s.var_interval *= 2;
      }
    } else if (++s.local_step_counter >= options_.local_step_scaler) {
      s.local_step_counter = 0;
      s.local_step_interval = std::min(options_.local_step_clipper, s.local_step_interval * 2);
    }
    if (!s.frozen && t > options_.var_freeze_step) {
      s.frozen = true;
      exchange_.reset_errors();  // they held the gradient's; from now on they hold the accumulated update's
    }
  }

  ZeroOneAdamOptions options_;
  Communicator& comm_;
  std::size_t n_;
  FlatAdam adam_;                   // the moments: state
  OnebitAllReduce exchange_;        // its errors: state
  std::vector<float> accumulated_;  // c: the local steps' updates since the last synchronisation: state
  Schedule schedule_;               // state
};

}  // namespace

StrategyInfo zero_one_adam_strategy() {
  return {.name = "zero_one_adam",
          .description = "0/1 Adam: 1-bit Adam's exchange with the variance refreshed at thinning intervals, then "
                         "frozen, and local steps whose accumulated update is synchronised at growing intervals",
          .parameters = zero_one_adam_schema().keys(),
          .create = [](const StrategySetup& setup) -> std::unique_ptr<Strategy> {
            return std::make_unique<ZeroOneAdam>(setup);
          },
          .syncs = zero_one_adam_syncs,
          .transport = [](const Config&) { return std::string(kOnebitTransport); },
          .examples = {{"zero_one_adam", {"strategy.name=zero_one_adam", "strategy.zero_one_adam.var_freeze_step=4",
                                             "strategy.zero_one_adam.var_update_scaler=2",
                                             "strategy.zero_one_adam.local_step_scaler=2",
                                             "strategy.zero_one_adam.local_step_clipper=2"}}},
          .label = {{"var_freeze_step", "freeze"}, {"local_step_clipper", "local<"}},
          .label_names_optimizer = false};  // its own Adam
}

}  // namespace lowcomm::strategy
