// The synthetic Markov source: its tables are distributions, its streams are reproducible, and its
// exact entropy rate is what the true model's measured loss converges to on a long stream.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <vector>

#include "lowcomm/data/markov_source.hpp"
#include "lowcomm/error.hpp"

namespace lowcomm {
namespace {

using ::testing::HasSubstr;

TEST(MarkovSource, RowsAreDistributions) {
  const MarkovSource chain({.vocab_size = 16, .order = 2, .successors = 3, .uniform_mix = 0.05,
                            .seed = 7});
  EXPECT_EQ(chain.context_count(), 256);
  for (std::uint16_t a = 0; a < 16; ++a) {
    for (std::uint16_t b = 0; b < 16; ++b) {
      const std::uint16_t context[] = {a, b};
      double sum = 0, h = 0;
      int likely = 0;
      for (std::uint16_t x = 0; x < 16; ++x) {
        const double p = chain.probability(context, x);
        sum += p;
        h -= p * std::log(p);
        likely += p > 0.05 / 16 * 1.0000001 ? 1 : 0;
      }
      EXPECT_NEAR(sum, 1.0, 1e-12);
      EXPECT_NEAR(chain.context_entropy(a * 16 + b), h, 1e-12);
      EXPECT_LE(likely, 3);
    }
  }
  const auto& pi = chain.stationary_distribution();
  EXPECT_NEAR(std::accumulate(pi.begin(), pi.end(), 0.0), 1.0, 1e-12);
}

TEST(MarkovSource, StreamsAreAFunctionOfSeedAndStreamId) {
  const MarkovSpec spec{.vocab_size = 256, .order = 1, .successors = 4, .uniform_mix = 0.01,
                        .seed = 3};
  const MarkovSource chain(spec), same(spec);
  EXPECT_EQ(chain.generate(0, 5000), same.generate(0, 5000));
  EXPECT_NE(chain.generate(0, 5000), chain.generate(1, 5000));
  // A prefix is the start of a longer stream.
  const auto longer = chain.generate(1, 6000);
  EXPECT_EQ(std::vector<std::uint16_t>(longer.begin(), longer.begin() + 5000), chain.generate(1, 5000));
  MarkovSpec other = spec;
  other.seed = 4;
  EXPECT_NE(MarkovSource(other).generate(0, 5000), chain.generate(0, 5000));
}

// The entropy rate (stationary-weighted) against the measured loss of the true model on a long
// stream, and the stream's own conditional entropy: all three agree to sampling error.
void expect_entropy_matches(const MarkovSpec& spec, std::size_t tokens, double tolerance) {
  const MarkovSource chain(spec);
  const double rate = chain.entropy_rate();
  const auto stream = chain.generate(0, tokens);
  const double measured = chain.empirical_log_loss(stream);
  const double conditional = chain.conditional_entropy(stream);
  EXPECT_NEAR(measured, rate, tolerance) << "order " << spec.order;
  EXPECT_NEAR(conditional, rate, tolerance) << "order " << spec.order;
  EXPECT_LT(rate, 0.6 * std::log(static_cast<double>(spec.vocab_size)));
  EXPECT_GT(rate, 0.0);
}

TEST(MarkovSource, EntropyRateMatchesEmpiricalLossOrder1) {
  expect_entropy_matches({.vocab_size = 256, .order = 1, .successors = 8, .uniform_mix = 0.01,
                          .seed = 11}, 1'000'000, 0.01);
}

TEST(MarkovSource, EntropyRateMatchesEmpiricalLossOrder2) {
  expect_entropy_matches({.vocab_size = 64, .order = 2, .successors = 4, .uniform_mix = 0.02,
                          .seed = 5}, 1'000'000, 0.01);
}

// The stationary distribution is stationary, and a stream's context frequencies approach it.
TEST(MarkovSource, StationaryDistributionMatchesFrequencies) {
  const MarkovSource chain({.vocab_size = 32, .order = 1, .successors = 3, .uniform_mix = 0.05,
                            .seed = 2});
  const auto& pi = chain.stationary_distribution();
  for (std::uint16_t y = 0; y < 32; ++y) {
    double flow = 0;
    for (std::uint16_t x = 0; x < 32; ++x) {
      const std::uint16_t context[] = {x};
      flow += pi[x] * chain.probability(context, y);
    }
    EXPECT_NEAR(flow, pi[y], 1e-10);
  }
  const auto stream = chain.generate(0, 500'000);
  std::vector<double> frequency(32, 0.0);
  for (std::uint16_t t : stream) frequency[t] += 1.0 / static_cast<double>(stream.size());
  for (std::size_t x = 0; x < 32; ++x) EXPECT_NEAR(frequency[x], pi[x], 0.01) << x;
}

TEST(MarkovSource, FewerSuccessorsMeanLowerEntropy) {
  const double two = MarkovSource({.vocab_size = 256, .order = 1, .successors = 2,
                                   .uniform_mix = 0.01, .seed = 1}).entropy_rate();
  const double thirty_two = MarkovSource({.vocab_size = 256, .order = 1, .successors = 32,
                                          .uniform_mix = 0.01, .seed = 1}).entropy_rate();
  EXPECT_LT(two, thirty_two);
  EXPECT_LT(thirty_two, std::log(256.0));
}

TEST(MarkovSource, BadSpecsAreConfigErrors) {
  const auto message = [](const MarkovSpec& spec) {
    try {
      MarkovSource chain(spec);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_THAT(message({.vocab_size = 256, .order = 3, .successors = 8}),
              HasSubstr("data.markov.order = 3"));
  EXPECT_THAT(message({.vocab_size = 256, .order = 1, .successors = 300}),
              HasSubstr("data.markov.successors = 300"));
  EXPECT_THAT(message({.vocab_size = 256, .order = 1, .successors = 8, .uniform_mix = 0}),
              HasSubstr("data.markov.uniform_mix = 0"));
  EXPECT_THAT(message({.vocab_size = 1, .order = 1, .successors = 1}),
              HasSubstr("data.vocab_size = 1"));
}

}  // namespace
}  // namespace lowcomm
