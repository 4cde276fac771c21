#pragma once
// Which ranks take part in a step's exchanges: peers that drop out, as in decentralised training
// over the internet (docs/network-model.md, "Peers that drop out"). A rank is absent from step s
// with probability p, drawn from (seed, s, rank) alone, so every rank knows who is present
// without communicating and a run is reproducible; scheduled outages make a rank absent for
// chosen ranges of steps. An absent rank's contribution is missing from the step's exchanges
// (CompressedAllReduce sends nothing of it and averages over the ranks present); it still
// receives the result, so the replicas stay identical.
//
// A step whose draws leave nobody present would have no mean to take: rank s mod W then takes
// part alone.
#include <cstdint>
#include <vector>

namespace lowcomm {

// Rank `rank` is absent for steps first..last (inclusive).
struct Outage {
  int rank = 0;
  std::uint64_t first = 0;
  std::uint64_t last = 0;
};

class Participation {
 public:
  Participation() = default;  // every rank, every step
  // Throws ConfigError for a probability outside [0, 1) or an outage of a rank outside the world.
  Participation(int world_size, double probability, std::vector<Outage> outages, std::uint64_t seed);

  bool always_everyone() const { return probability_ == 0.0 && outages_.empty(); }
  int world_size() const { return world_size_; }  // 0 for the default
  // One entry per rank: whether it takes part in step `step`; empty when every rank does (so a
  // step where nobody is absent costs what it costs without dropout).
  std::vector<bool> present(std::uint64_t step) const;

 private:
  int world_size_ = 0;
  double probability_ = 0.0;
  std::vector<Outage> outages_;
  std::uint64_t seed_ = 0;
};

}  // namespace lowcomm
