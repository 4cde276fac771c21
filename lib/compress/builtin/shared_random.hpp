#pragma once
// Random numbers every rank draws identically: a splitmix64 stream keyed by (seed, step, unit),
// so ranks agree on random choices without communicating, and a run is reproducible.
#include <cstdint>

namespace lowcomm::builtin {

class SharedRandom {
 public:
  SharedRandom(std::uint64_t seed, std::uint64_t step, std::uint64_t unit)
      : state_(mix(mix(seed) ^ mix(step + 0x632BE59BD9B4E019ull) ^ mix(unit + 0x8CB92BA72F3D8DD7ull))) {}

  std::uint64_t next() { return mix(state_ += 0x9E3779B97F4A7C15ull); }

  // Uniform in [0, bound] without modulo bias (rejection on the top of the range).
  std::uint64_t below_or_equal(std::uint64_t bound) {
    if (bound == UINT64_MAX) return next();
    const std::uint64_t range = bound + 1;
    const std::uint64_t limit = UINT64_MAX - UINT64_MAX % range;
    std::uint64_t x = next();
    while (x >= limit) x = next();
    return x % range;
  }

 private:
  static std::uint64_t mix(std::uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  std::uint64_t state_;
};

}  // namespace lowcomm::builtin
