#pragma once
// A synthetic token source whose best achievable loss is known exactly: a seeded random order-k
// Markov chain over the vocabulary. A model that reaches the chain's entropy rate has learned
// everything there is to learn, so a communication-efficient method can be judged by how close
// to that floor it gets, and how fast, without the noise and cost of real text.
//
// The chain: for every context (the last `order` tokens) the next token is, with probability
// 1 - uniform_mix, one of `successors` distinct tokens chosen at random for that context with
// weights drawn from a flat Dirichlet (normalised exponential variates), and with probability
// uniform_mix any token uniformly. The uniform part makes every context reachable from every
// other in `order` steps, so the chain is irreducible and aperiodic: it has one stationary
// distribution, and every long stream's statistics converge to it whatever its start. Each
// context's next-token entropy is then at most about log(successors) + uniform_mix·log(V),
// well below log(V) for a few successors.
//
// All randomness comes from a fixed, portable generator (SplitMix64), not from <random>'s
// distributions, whose output differs between standard libraries.
#include <cstdint>
#include <span>
#include <vector>

#include "lowcomm/data/token_buffer.hpp"

namespace lowcomm {

struct MarkovSpec {
  int vocab_size = 256;
  int order = 1;          // 1 or more; vocab_size^order contexts must be at most kMaxContexts
  int successors = 8;     // per context, 1..vocab_size
  double uniform_mix = 0.01;  // in (0, 1]
  std::uint64_t seed = 0;     // chooses the chain (the same for every stream)
};

class MarkovSource {
 public:
  static constexpr std::int64_t kMaxContexts = std::int64_t{1} << 20;

  // Builds the transition tables and computes the stationary distribution. Throws
  // lowcomm::ConfigError (naming data.markov.* keys) for a spec out of range.
  explicit MarkovSource(const MarkovSpec& spec);

  const MarkovSpec& spec() const { return spec_; }
  std::int64_t context_count() const { return contexts_; }

  // `count` tokens of stream `stream_id`: a function of (spec, stream_id) only. The chain starts
  // from a random context and runs 1000 tokens of burn-in that are dropped, so that the stream
  // starts close to the stationary distribution. Different stream ids give independent streams
  // of the same chain (training and validation use ids 0 and 1).
  std::vector<std::uint16_t> generate(std::uint64_t stream_id, std::size_t count) const;
  TokenBuffer generate_buffer(std::uint64_t stream_id, std::size_t count) const;

  // P(next = token | context); the context is the last `order` tokens, oldest first.
  double probability(std::span<const std::uint16_t> context, std::uint16_t token) const;
  // H(next | context = c) in nats, for context index c (tokens in base vocab_size, oldest most
  // significant).
  double context_entropy(std::int64_t context_index) const;
  const std::vector<double>& stationary_distribution() const { return stationary_; }

  // The entropy rate in nats/token: sum over contexts of pi(c) * H(next | c), pi the stationary
  // distribution of contexts. This is the lowest expected per-token cross-entropy any predictor
  // can reach on a long stream from this chain (the loss floor to report): the true conditional
  // minimises the expected log loss at every position (Gibbs' inequality), and the fraction of
  // positions with context c tends to pi(c). It assumes the predictor sees at least `order`
  // previous tokens: the first target of a training window has only one token of context, so
  // for order 2 one target in T is predicted with less (its excess loss is O(1/T)).
  double entropy_rate() const;

  // The same floor for one finite stream: the mean of H(next | context) over its positions
  // order..n-1, i.e. the expected loss of the true model on exactly those contexts. Use it for a
  // fixed validation set, whose empirical context frequencies differ slightly from pi.
  double conditional_entropy(std::span<const std::uint16_t> stream) const;

  // The measured loss of the true model on a stream: mean of -log P(x_t | context) over
  // positions order..n-1. It converges to entropy_rate() (what the tests check).
  double empirical_log_loss(std::span<const std::uint16_t> stream) const;

 private:
  std::int64_t context_index(std::span<const std::uint16_t> context) const;
  std::uint16_t sample(std::int64_t context, std::uint64_t& rng) const;
  void compute_stationary();

  MarkovSpec spec_;
  std::int64_t contexts_ = 0;
  std::vector<std::uint16_t> successor_;  // contexts_ x successors, distinct per context
  std::vector<double> weight_;            // contexts_ x successors, each row sums to 1
  std::vector<double> entropy_;           // per context, nats
  std::vector<double> stationary_;        // per context
};

}  // namespace lowcomm
