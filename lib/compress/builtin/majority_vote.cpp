// `majority_vote`: signSGD with majority vote (Bernstein et al., ICLR 2019), and with `momentum`
// β > 0 its momentum form, Signum with majority vote. Each rank sends the signs of its gradient
// (or of its local momentum m ← β·m + (1 − β)·g, kept per unit as state) at one bit each, n/8
// bytes rounded up; every rank counts the votes and the aggregate is the sign of their sum,
// −1, 0 or +1 per entry, which the optimizer then scales (plain SGD with lr η gives the paper's
// x ← x − η·sign(Σ_w sign(g_w))).
//
// Ties (an even number of ranks split evenly) give 0: the entry does not move, as torch.sign(0)
// in the authors' code. A vote is the sign bit of the value, so −0.0 votes −1 and +0.0 votes +1;
// a NaN cannot vote and is refused (pack_signs names its index).
#include <fmt/format.h>

#include <map>

#include "builtins.hpp"
#include "lowcomm/error.hpp"
#include "lowcomm/kernels/elementwise.hpp"
#include "lowcomm/kernels/pack.hpp"

namespace lowcomm::builtin {

namespace {

struct Votes {
  std::vector<float> own;    // this rank's votes, ±1: what transmitted() reports
  std::vector<float> tally;  // the sum of the votes received
  std::vector<float> one;    // one rank's votes, decoded
};

class MajorityVote final : public CompressorWith<Votes> {
 public:
  explicit MajorityVote(float momentum) : momentum_(momentum) {}

  Aggregation aggregation() const override { return Aggregation::Gathered; }
  bool supports(Granularity) const override { return true; }

  Message encode(const UnitContext& unit, std::span<const float> gradient, Votes& votes) override {
    const kernels::Backend backend = unit.execution.backend;
    std::span<const float> voted = gradient;
    if (momentum_ > 0.0f) {
      std::vector<float>& m = momentum_of(unit);
      kernels::scale(backend, momentum_, m, m);
      kernels::scale_add(backend, 1.0f - momentum_, gradient, m, m);
      voted = m;
    }
    std::vector<std::byte> payload(kernels::packed_sign_bytes(voted.size()));
    kernels::pack_signs(backend, voted, payload);
    votes.own.resize(voted.size());
    kernels::unpack_signs(backend, payload, votes.own);
    return Message::gather(std::move(payload));
  }

  std::optional<Message> decode(const UnitContext& unit, int, const Received& received, Votes& votes,
                                std::span<float> aggregate) override {
    const std::size_t world = received.gathered.size();
    if (world == 0 || world != static_cast<std::size_t>(unit.contributors())) {
      throw Error(fmt::format("majority_vote: unit '{}' received {} payloads from {} ranks", unit.name, world,
                              unit.contributors()));
    }
    const kernels::Backend backend = unit.execution.backend;
    const std::size_t n = aggregate.size();
    const std::size_t expected = kernels::packed_sign_bytes(n);
    votes.tally.resize(n);
    votes.one.resize(n);
    for (std::size_t w = 0; w < world; ++w) {
      if (received.gathered[w].size() != expected) {
        throw Error(fmt::format("majority_vote: rank {} sent {} bytes for unit '{}' of {} values, expected {}",
                                received.sender(w), received.gathered[w].size(), unit.name, n, expected));
      }
      // Sums of ±1 are exact in fp32 up to 2^24 ranks: the tally is the same in any order.
      kernels::unpack_signs(backend, received.gathered[w], w == 0 ? std::span<float>(votes.tally) : votes.one);
      if (w > 0) kernels::scale_add(backend, 1.0f, votes.one, votes.tally, votes.tally);
    }
    kernels::sign(backend, votes.tally, aggregate);
    return std::nullopt;
  }

  Transmitted transmitted(const UnitContext& unit, std::span<const float>, const Votes& votes,
                          std::span<float> out) const override {
    kernels::scale(unit.execution.backend, 1.0f, votes.own, out);
    return Transmitted::dense();
  }

  std::optional<std::uint64_t> wire_bytes(const UnitContext& unit, int) const override {
    return kernels::packed_sign_bytes(static_cast<std::size_t>(unit.numel()));
  }

  void save_state(StateDict& state, std::string_view prefix) const override {
    for (const auto& [id, m] : momenta_) state.put(fmt::format("{}momentum/{}", prefix, id), m);
  }

  void load_state(const StateDict& state, std::string_view prefix) override {
    std::map<std::uint32_t, std::vector<float>> loaded;
    const std::string momentum_prefix = fmt::format("{}momentum/", prefix);
    for (const std::string& key : state.float_keys()) {
      if (!key.starts_with(momentum_prefix)) continue;
      loaded[unit_id_of_state_key(key, momentum_prefix)] = state.floats(key);
    }
    momenta_ = std::move(loaded);
  }

 private:
  // The unit's momentum, zero at its first step; a restored one of another size is refused.
  std::vector<float>& momentum_of(const UnitContext& unit) {
    const auto n = static_cast<std::size_t>(unit.numel());
    auto [it, added] = momenta_.try_emplace(unit.unit_id, n, 0.0f);
    if (!added && it->second.size() != n) {
      throw Error(fmt::format("majority_vote: the momentum of unit {} ('{}') holds {} values, the unit {}",
                              unit.unit_id, unit.name, it->second.size(), n));
    }
    return it->second;
  }

  float momentum_;
  std::map<std::uint32_t, std::vector<float>> momenta_;  // per unit id: state
};

struct MajorityVoteOptions {
  double momentum = 0.0;
};

const OptionsSchema<MajorityVoteOptions>& majority_vote_schema() {
  static const auto schema = OptionsSchema<MajorityVoteOptions>().field(
      "momentum", &MajorityVoteOptions::momentum,
      "β of each rank's momentum m ← β·m + (1 − β)·g, whose signs vote (Signum); 0: the gradient's (signSGD)",
      {.min = 0.0, .max = 1.0, .max_exclusive = true});
  return schema;
}

}  // namespace

CompressorInfo majority_vote_compressor() {
  return {.name = "majority_vote",
          .description = "signSGD / Signum with majority vote: one sign bit per value gathered, the sign of the "
                         "votes' sum applied",
          .parameters = majority_vote_schema().keys(),
          .wire_examples = {{"momentum=0.9"}},
          .error_feedback_by_default = false,
          .create = [](const CompressorParameters& p) -> std::unique_ptr<Compressor> {
            const MajorityVoteOptions options = majority_vote_schema().read(p);
            if (options.momentum >= 1.0) p.reject("momentum", "must be below 1: at 1 the momentum never moves");
            return std::make_unique<MajorityVote>(static_cast<float>(options.momentum));
          },
          .label = {{"momentum", "momentum"}}};
}

}  // namespace lowcomm::builtin
