#pragma once
// SplitMix64 (Steele, Lea & Flood 2014): the data layer's only source of randomness. It is tiny,
// passes BigCrush, and gives the same numbers with every compiler and standard library, which
// <random>'s distributions do not; seeds are mixed from several values so that (seed, rank,
// epoch) or (seed, stream) give unrelated sequences.
#include <cmath>
#include <cstdint>
#include <initializer_list>

namespace lowcomm::data_detail {

inline std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// A generator state derived from several values (order matters).
inline std::uint64_t mix_seed(std::initializer_list<std::uint64_t> values) {
  std::uint64_t state = 0x6C6F77636F6D6Dull;  // "lowcomm"
  for (std::uint64_t v : values) {
    state ^= v;
    state = splitmix64(state);
  }
  return state;
}

// Uniform in [0, 1) with 53 random bits.
inline double uniform01(std::uint64_t& state) {
  return static_cast<double>(splitmix64(state) >> 11) * 0x1.0p-53;
}

// Uniform in [0, n), n > 0, by rejection (no modulo bias).
inline std::uint64_t uniform_below(std::uint64_t& state, std::uint64_t n) {
  const std::uint64_t limit = ~std::uint64_t{0} - (~std::uint64_t{0} % n);
  std::uint64_t x;
  do x = splitmix64(state);
  while (x >= limit);
  return x % n;
}

}  // namespace lowcomm::data_detail
