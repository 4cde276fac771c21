#pragma once
// SplitMix64 (Steele, Lea & Flood 2014): lowcomm's one source of seeded random numbers, in the
// data pipeline, the compressors' shared draws and stochastic rounding. It is tiny, passes
// BigCrush, and gives the same numbers with every compiler and standard library, which <random>'s
// distributions do not: same seed, same run, anywhere.
#include <cstdint>
#include <initializer_list>

#include "lowcomm/core/host_device.hpp"

namespace lowcomm {

inline constexpr std::uint64_t kSplitMixGamma = 0x9E3779B97F4A7C15ull;

// The generator's output function: a bijective mix of 64 bits.
LOWCOMM_HOST_DEVICE constexpr std::uint64_t splitmix64_mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// The next output of the stream whose state is `state` (advanced).
inline std::uint64_t splitmix64(std::uint64_t& state) { return splitmix64_mix(state += kSplitMixGamma); }

// Output i (0-based) of the stream seeded with `seed`, without stepping through the ones before:
// for draws that must not depend on the order (or the thread) that makes them.
LOWCOMM_HOST_DEVICE constexpr std::uint64_t splitmix64_at(std::uint64_t seed, std::uint64_t i) {
  return splitmix64_mix(seed + (i + 1) * kSplitMixGamma);
}

// A generator state derived from several values (order matters), so that (seed, rank, epoch) or
// (seed, stream) give unrelated sequences.
inline std::uint64_t mix_seed(std::initializer_list<std::uint64_t> values) {
  std::uint64_t state = 0x6C6F77636F6D6Dull;  // "lowcomm"
  for (std::uint64_t v : values) {
    state ^= v;
    state = splitmix64(state);
  }
  return state;
}

// Uniform in [0, 1) with 53 random bits.
inline double uniform01(std::uint64_t& state) { return static_cast<double>(splitmix64(state) >> 11) * 0x1.0p-53; }

// Uniform in [0, n), n > 0, by rejection (no modulo bias).
inline std::uint64_t uniform_below(std::uint64_t& state, std::uint64_t n) {
  const std::uint64_t limit = ~std::uint64_t{0} - (~std::uint64_t{0} % n);
  std::uint64_t x;
  do x = splitmix64(state);
  while (x >= limit);
  return x % n;
}

}  // namespace lowcomm
