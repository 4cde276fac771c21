#include "lowcomm/data/markov_source.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "lowcomm/error.hpp"
#include "lowcomm/core/splitmix.hpp"

namespace lowcomm {


namespace {

constexpr std::uint64_t kTableSalt = 0x7461626c65;   // "table"
constexpr std::uint64_t kStreamSalt = 0x73747265616d;  // "stream"
constexpr std::size_t kBurnIn = 1000;

double plogp(double p) { return p > 0 ? -p * std::log(p) : 0.0; }

}  // namespace

MarkovSource::MarkovSource(const MarkovSpec& spec) : spec_(spec) {
  const int v = spec.vocab_size;
  if (v < 2 || v > 65536) {
    throw ConfigError(fmt::format("data.vocab_size = {}: the Markov source needs 2..65536 tokens "
                                  "(uint16 shards)", v));
  }
  if (spec.order < 1) {
    throw ConfigError(fmt::format("data.markov.order = {} must be at least 1", spec.order));
  }
  contexts_ = 1;
  for (int i = 0; i < spec.order; ++i) {
    contexts_ *= v;
    if (contexts_ > kMaxContexts) {
      throw ConfigError(fmt::format(
          "data.markov.order = {} with data.vocab_size = {} makes {}^{} contexts, more than the "
          "{} the Markov source keeps tables for: lower the order or the vocabulary", spec.order,
          v, v, spec.order, kMaxContexts));
    }
  }
  if (spec.successors < 1 || spec.successors > v) {
    throw ConfigError(fmt::format("data.markov.successors = {} must be in 1..data.vocab_size ({})",
                                  spec.successors, v));
  }
  if (!(spec.uniform_mix > 0 && spec.uniform_mix <= 1)) {
    throw ConfigError(fmt::format("data.markov.uniform_mix = {} must be in (0, 1]: without it the "
                                  "chain may split into parts a stream never leaves",
                                  spec.uniform_mix));
  }

  const auto k = static_cast<std::size_t>(spec.successors);
  const auto n = static_cast<std::size_t>(contexts_);
  successor_.resize(n * k);
  weight_.resize(n * k);
  entropy_.resize(n);
  const double eps = spec.uniform_mix;
  const double floor_p = eps / v;
  for (std::size_t c = 0; c < n; ++c) {
    // Each context's row from its own seed: the tables do not depend on the order they are built.
    std::uint64_t rng = mix_seed({spec.seed, kTableSalt, c});
    std::uint16_t* succ = &successor_[c * k];
    // Floyd's algorithm: k distinct tokens of v with k draws.
    std::size_t chosen = 0;
    for (std::size_t j = static_cast<std::size_t>(v) - k; j < static_cast<std::size_t>(v); ++j) {
      auto t = static_cast<std::uint16_t>(uniform_below(rng, j + 1));
      if (std::find(succ, succ + chosen, t) != succ + chosen) t = static_cast<std::uint16_t>(j);
      succ[chosen++] = t;
    }
    // Flat Dirichlet weights: normalised Exp(1) variates.
    double* w = &weight_[c * k];
    double sum = 0;
    for (std::size_t i = 0; i < k; ++i) {
      w[i] = -std::log1p(-uniform01(rng));
      sum += w[i];
    }
    if (sum == 0) {  // all draws exactly 0: probability ~2^-53k, but keep the row a distribution
      std::fill(w, w + k, 1.0);
      sum = static_cast<double>(k);
    }
    double h = static_cast<double>(static_cast<std::size_t>(v) - k) * plogp(floor_p);
    for (std::size_t i = 0; i < k; ++i) {
      w[i] /= sum;
      h += plogp((1 - eps) * w[i] + floor_p);
    }
    entropy_[c] = h;
  }
  compute_stationary();
}

// Power iteration on the context chain. Context c = (..., a, b) followed by token x becomes
// (..., b, x): its index is (c mod V^(order-1)) * V + x. The uniform part sends eps/V of every
// context's mass to each of the V contexts sharing its suffix, which is what guarantees
// convergence (at a rate of at least (1 - eps) per `order` steps; random sparse rows mix much
// faster in practice).
void MarkovSource::compute_stationary() {
  const auto n = static_cast<std::size_t>(contexts_);
  const auto v = static_cast<std::size_t>(spec_.vocab_size);
  const auto k = static_cast<std::size_t>(spec_.successors);
  const std::size_t suffixes = n / v;
  const double eps = spec_.uniform_mix;
  std::vector<double> pi(n, 1.0 / static_cast<double>(n)), next(n), suffix_mass(suffixes);
  for (int iteration = 0; iteration < 100000; ++iteration) {
    std::fill(suffix_mass.begin(), suffix_mass.end(), 0.0);
    std::fill(next.begin(), next.end(), 0.0);
    for (std::size_t c = 0; c < n; ++c) {
      const std::size_t base = (c % suffixes) * v;
      suffix_mass[c % suffixes] += pi[c];
      const double sparse = (1 - eps) * pi[c];
      for (std::size_t i = 0; i < k; ++i) next[base + successor_[c * k + i]] += sparse * weight_[c * k + i];
    }
    double total = 0;
    for (std::size_t c = 0; c < n; ++c) {
      next[c] += eps / static_cast<double>(v) * suffix_mass[c / v];
      total += next[c];
    }
    double change = 0;
    for (std::size_t c = 0; c < n; ++c) {
      next[c] /= total;  // keeps rounding from drifting the total away from 1
      change += std::abs(next[c] - pi[c]);
    }
    pi.swap(next);
    if (change < 1e-13) break;
  }
  stationary_ = std::move(pi);
}

std::int64_t MarkovSource::context_index(std::span<const std::uint16_t> context) const {
  std::int64_t index = 0;
  for (std::uint16_t t : context) {
    if (t >= spec_.vocab_size) {
      throw Error(fmt::format("token {} is outside the Markov source's vocabulary of {}", t,
                              spec_.vocab_size));
    }
    index = index * spec_.vocab_size + t;
  }
  return index;
}

std::uint16_t MarkovSource::sample(std::int64_t context, std::uint64_t& rng) const {
  const double u = uniform01(rng);
  if (u < spec_.uniform_mix) {
    return static_cast<std::uint16_t>(uniform_below(rng, static_cast<std::uint64_t>(spec_.vocab_size)));
  }
  const auto k = static_cast<std::size_t>(spec_.successors);
  const std::size_t row = static_cast<std::size_t>(context) * k;
  double r = uniform01(rng), cumulative = 0;
  for (std::size_t i = 0; i + 1 < k; ++i) {
    cumulative += weight_[row + i];
    if (r < cumulative) return successor_[row + i];
  }
  return successor_[row + k - 1];  // the remainder, rounding included
}

std::vector<std::uint16_t> MarkovSource::generate(std::uint64_t stream_id, std::size_t count) const {
  std::uint64_t rng = mix_seed({spec_.seed, kStreamSalt, stream_id});
  std::int64_t context = static_cast<std::int64_t>(
      uniform_below(rng, static_cast<std::uint64_t>(contexts_)));
  const std::int64_t v = spec_.vocab_size;
  const std::int64_t suffixes = contexts_ / v;
  std::vector<std::uint16_t> tokens(count);
  for (std::size_t i = 0; i < kBurnIn + count; ++i) {
    const std::uint16_t x = sample(context, rng);
    context = (context % suffixes) * v + x;
    if (i >= kBurnIn) tokens[i - kBurnIn] = x;
  }
  return tokens;
}

TokenBuffer MarkovSource::generate_buffer(std::uint64_t stream_id, std::size_t count) const {
  return TokenBuffer(fmt::format("markov stream {} (order {}, {} successors, seed {})", stream_id,
                                 spec_.order, spec_.successors, spec_.seed),
                     generate(stream_id, count));
}

double MarkovSource::probability(std::span<const std::uint16_t> context, std::uint16_t token) const {
  if (context.size() != static_cast<std::size_t>(spec_.order)) {
    throw Error(fmt::format("the order-{} Markov source needs a context of {} tokens, not {}",
                            spec_.order, spec_.order, context.size()));
  }
  const double floor_p = spec_.uniform_mix / spec_.vocab_size;
  const auto k = static_cast<std::size_t>(spec_.successors);
  const std::size_t row = static_cast<std::size_t>(context_index(context)) * k;
  for (std::size_t i = 0; i < k; ++i) {
    if (successor_[row + i] == token) return (1 - spec_.uniform_mix) * weight_[row + i] + floor_p;
  }
  return floor_p;
}

double MarkovSource::context_entropy(std::int64_t context_index) const {
  return entropy_.at(static_cast<std::size_t>(context_index));
}

double MarkovSource::entropy_rate() const {
  double h = 0;
  for (std::size_t c = 0; c < entropy_.size(); ++c) h += stationary_[c] * entropy_[c];
  return h;
}

double MarkovSource::conditional_entropy(std::span<const std::uint16_t> stream) const {
  const auto order = static_cast<std::size_t>(spec_.order);
  if (stream.size() <= order) return 0;
  double h = 0;
  for (std::size_t t = order; t < stream.size(); ++t) {
    h += entropy_[static_cast<std::size_t>(context_index(stream.subspan(t - order, order)))];
  }
  return h / static_cast<double>(stream.size() - order);
}

double MarkovSource::empirical_log_loss(std::span<const std::uint16_t> stream) const {
  const auto order = static_cast<std::size_t>(spec_.order);
  if (stream.size() <= order) return 0;
  double loss = 0;
  for (std::size_t t = order; t < stream.size(); ++t) {
    loss -= std::log(probability(stream.subspan(t - order, order), stream[t]));
  }
  return loss / static_cast<double>(stream.size() - order);
}

}  // namespace lowcomm
