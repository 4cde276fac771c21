#pragma once
// Random numbers every rank draws identically: a SplitMix64 stream keyed by (seed, step, unit),
// so ranks agree on random choices without communicating, and a run is reproducible.
#include <cstdint>

#include "lowcomm/core/splitmix.hpp"

namespace lowcomm::builtin {

class SharedRandom {
 public:
  SharedRandom(std::uint64_t seed, std::uint64_t step, std::uint64_t unit)
      : state_(splitmix64_mix(splitmix64_mix(seed) ^ splitmix64_mix(step + 0x632BE59BD9B4E019ull) ^
                              splitmix64_mix(unit + 0x8CB92BA72F3D8DD7ull))) {}

  std::uint64_t next() { return splitmix64(state_); }

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
  std::uint64_t state_;
};

}  // namespace lowcomm::builtin
