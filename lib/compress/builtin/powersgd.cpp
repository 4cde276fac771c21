// `powersgd`: rank-r approximation by one step of power iteration with warm start, as in the
// paper's reference code (REFERENCE.md §3, the variant that produced the published numbers):
//   M = input as n × m (first dimension × the rest), r' = min(n, m, r)
//   round 0: P = M Q, all-reduce SUM            (Q: m × r', shared random start, then reused)
//   round 1: P̂ = GramSchmidt(P), Q = Mᵀ P̂, all-reduce SUM, Q /= W
//   result:  P̂ Qᵀ  (the aggregate; the paper's error feedback is taken against it)
// Tensors with fewer than two dimensions go dense (one round, the mean). Error feedback is on by
// default, as in the paper. Needs each tensor's shape: per-tensor granularity only.
//
// Error feedback fused (fused_error_feedback.hpp): where the backend has the kernel
// (kernels::feedback_product: Reference, Cpu) and r' ≤ 8, the residual corrected − P̂Q̄ᵀ is never
// written. The error feedback keeps `corrected`, this compressor keeps P̂ and Q̄, and the next
// step's M·Q computes β·(corrected − P̂Q̄ᵀ) + G in its own pass, with the unfused sequence's bits.
//
// PyTorch's DDP hook (powerSGD_hook) differs in three options, all off by default here; its own
// defaults are rank 1, start_step 1000, min_compression_rate 2, orthogonalize_q true:
//   start_step            steps before it are dense all-reduces (and keep no error)
//   min_compression_rate  compress a matrix only when (n + m)·r'·rate < n·m, else send it dense
//   orthogonalize_q       Gram-Schmidt on Q before every use: the random start and each reuse
#include <fmt/format.h>

#include <cmath>
#include <map>
#include <numbers>

#include "builtins.hpp"
#include "lowcomm/compress/fused_error_feedback.hpp"
#include "lowcomm/error.hpp"
#include "lowcomm/kernels/backend.hpp"
#include "lowcomm/kernels/elementwise.hpp"
#include "lowcomm/kernels/linalg.hpp"
#include "shared/shared_random.hpp"

namespace lowcomm::builtin {

namespace {


struct Shape {
  std::int64_t n = 0, m = 0, r = 0;  // r: the effective rank r'
  bool dense() const { return r == 0; }
};

struct Options {
  std::int64_t rank = 2;
  std::uint64_t start_step = 0;
  double min_compression_rate = 0.0;
  bool orthogonalize_q = false;
};

struct Factors {                 // this step's, from encode to the last decode
  std::span<const float> input;  // M of this step, needed again for Q = Mᵀ P̂
  std::vector<float> p_hat;
};

// What a step transmitted, P̂·Q̄ᵀ, as its factors: kept for fused error feedback until the unit's
// next encode subtracts it from the corrected input the error feedback kept.
struct LastTransmitted {
  kernels::Backend backend{};
  std::uint64_t step = 0;
  Shape shape;
  std::vector<float> p_hat;  // n × r'
  std::vector<float> q;      // m × r': Q̄ as the reconstruction used it (orthogonalize_q changes Q after)
};

class PowerSgd final : public CompressorWith<Factors>, public FusedErrorFeedback {
 public:
  explicit PowerSgd(Options options) : options_(options) {}

  Aggregation aggregation() const override { return Aggregation::MultiRound; }
  bool supports(Granularity granularity) const override { return granularity == Granularity::PerTensor; }

  Message encode(const UnitContext& unit, std::span<const float> gradient, Factors& factors) override {
    const Shape s = shape_of(unit);
    if (s.dense()) return Message::sum({gradient.begin(), gradient.end()});
    factors.input = gradient;  // valid until the last decode (compressor.hpp)
    std::vector<float> p(static_cast<std::size_t>(s.n * s.r));
    kernels::gemm(unit.execution.backend, false, false, s.n, s.r, s.m, 1.0f, gradient, this_steps_q(unit, s), 0.0f,
                  p);
    return Message::sum(std::move(p));
  }

  std::optional<Message> decode(const UnitContext& unit, int round, const Received& received,
                                Factors& factors, std::span<float> aggregate) override {
    const Shape s = shape_of(unit);
    const float ranks = static_cast<float>(unit.contributors());
    if (s.dense()) {
      check_size(unit, received.sum.size(), aggregate.size());
      for (std::size_t i = 0; i < aggregate.size(); ++i) aggregate[i] = received.sum[i] / ranks;
      return std::nullopt;
    }
    if (round == 0) {
      check_size(unit, received.sum.size(), static_cast<std::size_t>(s.n * s.r));
      factors.p_hat.assign(received.sum.begin(), received.sum.end());
      kernels::orthonormalize_columns(unit.execution.backend, factors.p_hat, s.n, s.r);
      std::vector<float> q(static_cast<std::size_t>(s.m * s.r));
      kernels::gemm(unit.execution.backend, true, false, s.m, s.r, s.n, 1.0f, factors.input, factors.p_hat, 0.0f, q);
      return Message::sum(std::move(q));
    }
    check_size(unit, received.sum.size(), static_cast<std::size_t>(s.m * s.r));
    std::vector<float>& q = q_.at(unit.unit_id);
    for (std::size_t i = 0; i < q.size(); ++i) q[i] = received.sum[i] / ranks;  // kept: warm start
    reconstruct(unit, s, factors.p_hat, q, aggregate);
    if (fusion_offered_ && fusable(unit, s)) {
      LastTransmitted& last = last_[unit.unit_id];
      last = {.backend = unit.execution.backend, .step = unit.step, .shape = s, .p_hat = {}, .q = {}};
      last.p_hat.assign(factors.p_hat.begin(), factors.p_hat.end());
      last.q.assign(q.begin(), q.end());
    }
    return std::nullopt;
  }

  // Matrices: the reconstruction P̂·Q̄ᵀ decode wrote, as the paper's code takes the error against
  // it. A dense 1-D tensor is sent exactly (its aggregate is the mean: not the same).
  Transmitted transmitted(const UnitContext& unit, std::span<const float> input, const Factors&,
                          std::span<float> out) const override {
    if (!shape_of(unit).dense()) return Transmitted::aggregate();
    std::copy(input.begin(), input.end(), out.begin());  // no error to keep
    return Transmitted::dense();
  }

  std::optional<std::uint64_t> wire_bytes(const UnitContext& unit, int round) const override {
    const Shape s = shape_of(unit);
    const std::int64_t floats = s.dense() ? unit.numel() : (round == 0 ? s.n : s.m) * s.r;
    return static_cast<std::uint64_t>(floats) * sizeof(float);
  }

  // What a checkpoint needs is Q: a deferred residual is saved subtracted (ErrorFeedback), so the
  // last factors are not state.
  void save_state(StateDict& state, std::string_view prefix) const override {
    for (const auto& [id, q] : q_) state.put(fmt::format("{}q/{}", prefix, id), q);
  }

  void load_state(const StateDict& state, std::string_view prefix) override {
    q_.clear();
    last_.clear();
    const std::string q_prefix = fmt::format("{}q/", prefix);
    for (const std::string& key : state.keys()) {
      if (!key.starts_with(q_prefix)) continue;
      q_[unit_id_of_state_key(key, q_prefix)] = state.floats(key);
    }
  }

  FusedErrorFeedback* fused_error_feedback() override {
    fusion_offered_ = true;
    return this;
  }

  bool keeps_transmitted(const UnitContext& unit) const override {
    const auto last = last_.find(unit.unit_id);
    return last != last_.end() && last->second.step == unit.step;
  }

  Message encode_corrected(const UnitContext& unit, float decay, std::span<const float> gradient,
                           std::span<float> corrected, UnitScratch& scratch) override {
    const Shape s = shape_of(unit);
    const LastTransmitted& last = last_of(unit.unit_id);
    if (s.dense() || s.n != last.shape.n || s.m != last.shape.m) {
      throw Error(fmt::format("powersgd: unit '{}' is no longer the {} × {} matrix whose residual was deferred "
                              "(internal error)",
                              unit.name, last.shape.n, last.shape.m));
    }
    Factors& factors = scratch.get_or_create<Factors>();
    factors.input = corrected;
    std::vector<float> p(static_cast<std::size_t>(s.n * s.r));
    kernels::feedback_product(unit.execution.backend, s.n, s.m, last.shape.r, last.p_hat, last.q, decay, gradient,
                              corrected, s.r, this_steps_q(unit, s), p);
    return Message::sum(std::move(p));
  }

  // The unfused sequence's first two operations: residual = corrected − P̂Q̄ᵀ.
  void subtract_transmitted(std::uint32_t unit_id, std::span<const float> corrected,
                            std::span<float> residual) const override {
    const LastTransmitted& last = last_of(unit_id);
    const Shape& s = last.shape;
    kernels::gemm(last.backend, false, true, s.n, s.m, s.r, 1.0f, last.p_hat, last.q, 0.0f, residual);
    kernels::subtract(last.backend, corrected, residual, residual);
  }

 private:
  // The matrix view of the unit at this step, or dense (r = 0).
  Shape shape_of(const UnitContext& unit) const {
    if (unit.shape.size() < 2 || unit.step < options_.start_step) return {};
    const std::int64_t n = unit.shape[0];
    const std::int64_t m = unit.numel() / std::max<std::int64_t>(n, 1);
    const std::int64_t r = std::min({n, m, options_.rank});
    const bool worth_it = static_cast<double>((n + m) * r) * options_.min_compression_rate < static_cast<double>(n * m);
    return worth_it ? Shape{n, m, r} : Shape{};
  }

  // Q of the previous step, or on the first step a standard normal draw every rank makes alike.
  std::vector<float>& warm_start(const UnitContext& unit, const Shape& s) {
    std::vector<float>& q = q_[unit.unit_id];
    const auto size = static_cast<std::size_t>(s.m * s.r);
    if (q.size() == size) return q;
    if (!q.empty()) {
      throw Error(fmt::format("powersgd: saved Q of unit '{}' has {} values, its shape needs {}", unit.name,
                              q.size(), size));
    }
    SharedRandom random(unit.shared_seed, 0, unit.unit_id);
    q.resize(size);
    auto uniform = [&] { return (static_cast<double>(random.next() >> 11) + 0.5) * 0x1.0p-53; };
    for (std::size_t i = 0; i < size; i += 2) {  // Box-Muller: two normals per pair of uniforms
      const double radius = std::sqrt(-2.0 * std::log(uniform()));
      const double angle = 2.0 * std::numbers::pi * uniform();
      q[i] = static_cast<float>(radius * std::cos(angle));
      if (i + 1 < size) q[i + 1] = static_cast<float>(radius * std::sin(angle));
    }
    return q;
  }

  // The Q that multiplies this step's M: last step's Q̄ (or the random start), orthonormalised
  // first where orthogonalize_q asks.
  std::span<const float> this_steps_q(const UnitContext& unit, const Shape& s) {
    std::vector<float>& q = warm_start(unit, s);
    if (options_.orthogonalize_q) kernels::orthonormalize_columns(unit.execution.backend, q, s.m, s.r);
    return q;
  }

  static bool fusable(const UnitContext& unit, const Shape& s) {
    return s.r <= kernels::kFeedbackProductMaxRank && kernels::implements(unit.execution.backend, "feedback_product");
  }

  const LastTransmitted& last_of(std::uint32_t unit_id) const {
    const auto last = last_.find(unit_id);
    if (last == last_.end()) {
      throw Error(fmt::format("powersgd: no transmitted factors kept for unit {} (internal error)", unit_id));
    }
    return last->second;
  }

  static void reconstruct(const UnitContext& unit, const Shape& s, std::span<const float> p_hat,
                          std::span<const float> q, std::span<float> out) {
    kernels::gemm(unit.execution.backend, false, true, s.n, s.m, s.r, 1.0f, p_hat, q, 0.0f, out);
  }

  static void check_size(const UnitContext& unit, std::size_t got, std::size_t expected) {
    if (got != expected) {
      throw Error(fmt::format("powersgd: unit '{}' received {} values, expected {}", unit.name, got, expected));
    }
  }

  Options options_;
  std::map<std::uint32_t, std::vector<float>> q_;  // warm-start factors: state
  bool fusion_offered_ = false;                     // an ErrorFeedback asked: keep last_
  std::map<std::uint32_t, LastTransmitted> last_;  // each unit's last step, for fused error feedback
};

const OptionsSchema<Options>& powersgd_schema() {
  static const auto schema =
      OptionsSchema<Options>()
          .field("rank", &Options::rank, "rank r of the approximation (r' = min(n, m, r))", {.min = 1.0, .max = 1e6})
          .field("start_step", &Options::start_step, "dense all-reduce before this step (PyTorch hook: 1000)",
                 {.min = 0.0})
          .field("min_compression_rate", &Options::min_compression_rate,
                 "compress a matrix only when (n+m) r' rate < n m (PyTorch hook: 2)", {.min = 0.0})
          .field("orthogonalize_q", &Options::orthogonalize_q,
                 "Gram-Schmidt on Q before every use, start and reuse (PyTorch hook: true)");
  return schema;
}

}  // namespace

CompressorInfo powersgd_compressor() {
  return {.name = "powersgd",
          .description = "rank-r power iteration with warm start (paper code): two all-reduces of r(n+m) floats",
          .parameters = powersgd_schema().keys(),
          .wire_examples = {{}},
          .error_feedback_by_default = true,
          .create = [](const CompressorParameters& p) -> std::unique_ptr<Compressor> {
            return std::make_unique<PowerSgd>(powersgd_schema().read(p));
          },
          .label = {{"rank", "rank"}, {.key = "start_step", .shown_as = "start", .hidden_at = "0", .late = true}}};
}

}  // namespace lowcomm::builtin
