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
// compressed_mean, on the whole model as one vector padded with zeros to N entries, N a multiple
// of W·lcm(W, 8) so that each rank's chunk of N/W signs is whole bytes:
//   b ← m + e_worker ;  s ← sign(b) (0 counts +1) ;  a ← ‖b‖/√N ;  e_worker ← b − a·s
//   phase 1: chunk j of every rank's signs to rank j (all-to-all), every a to every rank
//   rank j:  c ← Σ_i a_i/W·s_i[chunk j] + e_server ;  t ← sign(c) ;  α ← ‖c‖/√(N/W) ;
//            e_server ← c − α·t
//   phase 2: every rank's t and α to every rank (all-gathers); m ← α_j·t_j on chunk j
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
#include <numeric>
#include <string>
#include <vector>

#include "builtins.hpp"
#include "lowcomm/comm/network_config.hpp"
#include "lowcomm/comm/participation.hpp"
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
};

// strategy.onebit_adam.*, declared once (config/options_schema.hpp); the defaults are DeepSpeed's.
const OptionsSchema<OnebitAdamOptions>& onebit_adam_schema() {
  static const auto schema =
      OptionsSchema<OnebitAdamOptions>()
          .field("freeze_step", &OnebitAdamOptions::freeze_step,
                 "exact Adam steps (dense all-reduce) before the variance freezes and the momentum travels as signs",
                 {.min = 0.0})
          .field("beta1", &OnebitAdamOptions::beta1, "momentum decay, in [0, 1)", {.min = 0.0, .max = 1.0})
          .field("beta2", &OnebitAdamOptions::beta2, "variance decay, in [0, 1)", {.min = 0.0, .max = 1.0})
          .field("eps", &OnebitAdamOptions::eps, "added to the square root of the variance", {.min = 0.0})
          .field("weight_decay", &OnebitAdamOptions::weight_decay,
                 "lambda: the update is m / (sqrt(v) + eps) + lambda * x", {.min = 0.0});
  return schema;
}

OnebitAdamOptions onebit_adam_options(const Config& config) {
  OnebitAdamOptions options = onebit_adam_schema().read(ComponentParameters(config, "strategy.onebit_adam"));
  if (options.beta1 >= 1.0 || options.beta2 >= 1.0) {
    throw ConfigError(fmt::format("strategy.onebit_adam.beta1 = {} and beta2 = {} must be below 1", options.beta1,
                                  options.beta2));
  }
  return options;
}

// N: n padded to a multiple of W·lcm(W, 8), as DeepSpeed's corrected_tensor_size.
std::uint64_t padded_size(std::uint64_t n, int world_size) {
  const auto w = static_cast<std::uint64_t>(world_size);
  const std::uint64_t multiple = w * std::lcm(w, std::uint64_t{8});
  return (n + multiple - 1) / multiple * multiple;
}

// The compression stage's four collectives, in order: the signs' all-to-all (N/8 bytes, a block
// of N/(8W) per rank), the worker scales' all-gather, the server signs' all-gather (N/(8W) per
// rank) and the server scales' all-gather.
StepTraffic price_onebit_exchange(std::uint64_t parameters, int world_size, const CommunicatorOptions& options) {
  const std::uint64_t chunk_bytes = padded_size(parameters, world_size) / 8 / static_cast<std::uint64_t>(world_size);
  const auto w = static_cast<std::size_t>(world_size);
  StepTraffic traffic;
  traffic.bytes_sent.assign(w, 0);
  traffic.bytes_received.assign(w, 0);
  const auto add = [&](const CollectiveCost& cost) {
    ++traffic.calls;
    traffic.modelled_s += cost.seconds;
    for (std::size_t r = 0; r < w; ++r) {
      traffic.bytes_sent[r] += cost.bytes_sent[r];
      traffic.bytes_received[r] += cost.bytes_received[r];
    }
  };
  const std::vector<std::uint64_t> scale(w, sizeof(float)), signs(w, chunk_bytes);
  add(options.network.all_to_all(world_size, chunk_bytes));
  add(options.network.all_gather(options.all_gather_algorithm, scale));
  add(options.network.all_gather(options.all_gather_algorithm, signs));
  add(options.network.all_gather(options.all_gather_algorithm, scale));
  traffic.payload_bytes = (w - 1) * chunk_bytes + sizeof(float) + chunk_bytes + sizeof(float);
  return traffic;
}

// What `lowcomm plan` prices: the compression stage, every step.
std::vector<PlannedSync> onebit_adam_syncs(const Config& config, std::span<const TensorInfo> tensors) {
  (void)onebit_adam_options(config);  // refuses what create would
  std::uint64_t parameters = 0;
  for (const TensorInfo& t : tensors) parameters += static_cast<std::uint64_t>(t.numel());
  std::vector<PlannedSync> syncs(1);
  syncs[0].count = tensors.size();
  syncs[0].price = [parameters](int world_size, const CommunicatorOptions& options) {
    return price_onebit_exchange(parameters, world_size, options);
  };
  return syncs;
}

// +1 for x ≥ 0 (and NaN), −1 for x < 0: DeepSpeed's sign().add_(1).bool().
bool sign_bit(float x) { return !(x < 0.0f); }
float signed_one(bool bit) { return bit ? 1.0f : -1.0f; }

// ‖x‖₂/√count, the sum of squares in double.
float rms_scale(std::span<const float> x, std::uint64_t count) {
  double squares = 0.0;
  for (const float v : x) squares += static_cast<double>(v) * v;
  return static_cast<float>(std::sqrt(squares) / std::sqrt(static_cast<double>(count)));
}

void pack_signs(std::span<const float> values, std::span<std::uint8_t> bits) {
  std::ranges::fill(bits, std::uint8_t{0});
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (sign_bit(values[i])) bits[i / 8] = static_cast<std::uint8_t>(bits[i / 8] | (1u << (i % 8)));
  }
}
bool bit_at(std::span<const std::uint8_t> bits, std::size_t i) { return ((bits[i / 8] >> (i % 8)) & 1u) != 0; }

class OnebitAdam final : public Strategy {
 public:
  explicit OnebitAdam(const StrategySetup& setup)
      : options_(onebit_adam_options(setup.config)), comm_(setup.comm), tensors_(setup.tensors) {
    if (setup.config.has("compressor.name") && setup.config.get_string("compressor.name") != "none") {
      throw ConfigError(fmt::format("strategy onebit_adam compresses its momentum itself (one sign bit per entry): "
                                    "set compressor.name = \"none\" (got \"{}\")",
                                    setup.config.get_string("compressor.name")));
    }
    if (!participation_from_config(setup.config, comm_.size(), setup.seed).always_everyone()) {
      throw ConfigError("strategy onebit_adam has no rule for absent peers (its exchange needs every rank's chunk): "
                        "unset cluster.dropout and cluster.rank.*.absent_steps");
    }
    for (const TensorInfo& t : tensors_) n_ += static_cast<std::size_t>(t.numel());
    padded_ = static_cast<std::size_t>(padded_size(n_, comm_.size()));
    chunk_ = padded_ / static_cast<std::size_t>(comm_.size());
    m_.assign(n_, 0.0f);
    v_.assign(n_, 0.0f);
    gradient_.assign(n_, 0.0f);
  }

  std::string_view name() const override { return "onebit_adam"; }

  StrategyStepReport step(std::uint64_t step, double lr, std::span<const std::span<float>> params,
                          std::span<const std::span<const float>> grads) override {
    if (!(lr >= 0) || !std::isfinite(lr)) throw Error(fmt::format("onebit_adam: learning rate {} at step {}", lr, step));
    StrategyStepReport report;
    report.synchronized = true;
    gather_gradient(grads);
    const bool warm_up = step < static_cast<std::uint64_t>(options_.freeze_step);
    const CommCounters before = comm_.totals();
    const auto b1 = static_cast<float>(options_.beta1), c1 = static_cast<float>(1.0 - options_.beta1);
    if (warm_up) {
      comm_.all_reduce(std::span<float>(gradient_), ReduceOp::Average);
      report.sync.payload_bytes = n_ * sizeof(float);
      report.sync.rounds = 1;
      MeasuredSpan update("compute", "update");
      const auto b2 = static_cast<float>(options_.beta2), c2 = static_cast<float>(1.0 - options_.beta2);
      for (std::size_t i = 0; i < n_; ++i) {
        const float g = gradient_[i];
        m_[i] = m_[i] * b1 + c1 * g;
        v_[i] = v_[i] * b2 + c2 * (g * g);
      }
      report.update_s = update.stop();
    } else {
      MeasuredSpan momentum("compute", "update");
      for (std::size_t i = 0; i < n_; ++i) m_[i] = m_[i] * b1 + c1 * gradient_[i];
      report.update_s = momentum.stop();
      if (comm_.size() > 1) {  // alone, DeepSpeed keeps the exact momentum (adam.py: `if self.size > 1`)
        report.sync.payload_bytes = compressed_mean();
        report.sync.rounds = 2;
      }
    }
    report.sync.comm = comm_.totals() - before;
    MeasuredSpan update("compute", "update");
    apply_update(params, static_cast<float>(lr));
    report.update_s += update.stop();
    return report;
  }

  void save_state(StateDict& state, std::string_view prefix) const override {
    const std::string p(prefix);
    state.put(p + "exp_avg", std::span<const float>(m_));
    state.put(p + "exp_avg_sq", std::span<const float>(v_));
    state.put(p + "compressing", compressing_ ? 1 : 0);
    if (compressing_) {
      state.put(p + "worker_error", std::span<const float>(worker_error_));
      state.put(p + "server_error", std::span<const float>(server_error_));
    }
  }
  void load_state(const StateDict& state, std::string_view prefix) override {
    const std::string p(prefix);
    load_exact(state, p + "exp_avg", m_, n_);
    load_exact(state, p + "exp_avg_sq", v_, n_);
    compressing_ = state.integer(p + "compressing") != 0;
    if (compressing_) {
      load_exact(state, p + "worker_error", worker_error_, padded_);
      load_exact(state, p + "server_error", server_error_, chunk_);
    } else {
      worker_error_.clear();
      server_error_.clear();
    }
  }

 private:
  static void load_exact(const StateDict& state, const std::string& key, std::vector<float>& into, std::size_t size) {
    const std::vector<float>& values = state.floats(key);
    if (values.size() != size) {
      throw Error(fmt::format("onebit_adam: state '{}' holds {} values; this model and world size need {}", key,
                              values.size(), size));
    }
    into = values;
  }

  void gather_gradient(std::span<const std::span<const float>> grads) {
    std::size_t at = 0;
    for (const std::span<const float> g : grads) {
      std::ranges::copy(g, gradient_.begin() + static_cast<std::ptrdiff_t>(at));
      at += g.size();
    }
    if (at != n_) throw Error(fmt::format("onebit_adam: {} gradient values for {} parameters", at, n_));
  }

  // m ← compressed_mean(m) (see the top); returns this rank's payload bytes.
  std::uint64_t compressed_mean() {
    const int w = comm_.size();
    if (!compressing_) {  // the errors start at zero with the compression stage
      worker_error_.assign(padded_, 0.0f);
      server_error_.assign(chunk_, 0.0f);
      compressing_ = true;
    }
    MeasuredSpan worker("compute", "codec");
    std::vector<float> buffer(padded_);
    for (std::size_t i = 0; i < padded_; ++i) buffer[i] = (i < n_ ? m_[i] : 0.0f) + worker_error_[i];
    const float worker_scale = rms_scale(buffer, padded_);
    for (std::size_t i = 0; i < padded_; ++i) worker_error_[i] = buffer[i] - worker_scale * signed_one(sign_bit(buffer[i]));
    std::vector<std::uint8_t> signs(padded_ / 8), chunks(padded_ / 8);
    pack_signs(buffer, signs);
    worker.stop();

    std::vector<float> scales(static_cast<std::size_t>(w));
    comm_.all_to_all(std::span<const std::uint8_t>(signs), std::span<std::uint8_t>(chunks));
    comm_.all_gather(std::span<const float>(&worker_scale, 1), std::span<float>(scales));

    MeasuredSpan server("compute", "codec");
    const std::size_t chunk_bytes = chunk_ / 8;
    const float inverse_w = 1.0f / static_cast<float>(w);
    std::vector<float> compensated(chunk_, 0.0f);
    for (std::size_t c = 0; c < chunk_; ++c) {
      float sum = 0.0f;
      for (int j = 0; j < w; ++j) {
        const std::span<const std::uint8_t> from(chunks.data() + static_cast<std::size_t>(j) * chunk_bytes, chunk_bytes);
        sum += signed_one(bit_at(from, c)) * (scales[static_cast<std::size_t>(j)] * inverse_w);
      }
      compensated[c] = sum + server_error_[c];
    }
    const float server_scale = rms_scale(compensated, chunk_);
    for (std::size_t c = 0; c < chunk_; ++c) {
      server_error_[c] = compensated[c] - server_scale * signed_one(sign_bit(compensated[c]));
    }
    std::vector<std::uint8_t> server_signs(chunk_bytes);
    pack_signs(compensated, server_signs);
    server.stop();

    std::vector<std::uint8_t> all_signs(padded_ / 8);
    std::vector<float> server_scales(static_cast<std::size_t>(w));
    comm_.all_gather(std::span<const std::uint8_t>(server_signs), std::span<std::uint8_t>(all_signs));
    comm_.all_gather(std::span<const float>(&server_scale, 1), std::span<float>(server_scales));
    for (std::size_t i = 0; i < n_; ++i) m_[i] = server_scales[i / chunk_] * signed_one(bit_at(all_signs, i));
    return (static_cast<std::uint64_t>(w) - 1) * chunk_bytes + sizeof(float) + chunk_bytes + sizeof(float);
  }

  // u ← m / (√v + ε) (+ λ·x) ; x ← x + (−η)·u, in DeepSpeed's order of operations.
  void apply_update(std::span<const std::span<float>> params, float eta) const {
    const auto eps = static_cast<float>(options_.eps), decay = static_cast<float>(options_.weight_decay);
    std::size_t i = 0;
    for (const std::span<float> x : params) {
      for (float& value : x) {
        float u = m_[i] / (std::sqrt(v_[i]) + eps);
        if (decay > 0.0f) u += decay * value;
        value += -eta * u;
        ++i;
      }
    }
  }

  OnebitAdamOptions options_;
  Communicator& comm_;
  std::vector<TensorInfo> tensors_;
  std::size_t n_ = 0;       // parameters
  std::size_t padded_ = 0;  // N
  std::size_t chunk_ = 0;   // N / W: the chunk this rank serves
  std::vector<float> m_, v_;                           // Adam's moments over the flat model: state
  std::vector<float> worker_error_, server_error_;     // the compression stage's: state
  bool compressing_ = false;                           // the errors exist
  std::vector<float> gradient_;                        // this step's, flat (and averaged in the warm-up)
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
          .transport = {}};
}

}  // namespace lowcomm::strategy
