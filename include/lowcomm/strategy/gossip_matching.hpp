#pragma once
// Who averages with whom in a gossip round (NoLoCo): a uniformly random pairing of the ranks,
// drawn from the run's seed and the round alone, so every rank computes the same one without
// communicating and a run is reproducible.
//
// The rule, written so that an independent implementation gives the same pairs
// (tests/fixtures/make_noloco_fixture.py does): a SplitMix64 stream with state
// seed XOR (0x9E3779B97F4A7C15 · (round + 1)) (mod 2^64); next(): state += 0x9E3779B97F4A7C15,
// z = state, z = (z XOR z >> 30) · 0xBF58476D1CE4E5B9, z = (z XOR z >> 27) · 0x94D049BB133111EB,
// return z XOR z >> 31. The ranks 0..W-1 are shuffled by Fisher-Yates, i from W-1 down to 1 swapping
// perm[i] and perm[next() mod (i + 1)]; then perm[0] pairs with perm[1], perm[2] with perm[3], ...
// With W odd, perm[W-1] sits the round out. A pair with a rank absent from the round (`present`,
// comm/participation.hpp) does not meet: both sit it out.
#include <cstdint>
#include <vector>

namespace lowcomm {

// partners[r] = r's partner, or -1 (Communicator::exchange_pairs's form). `present`: empty when
// every rank takes part, else one entry per rank.
std::vector<int> gossip_matching(int world_size, std::uint64_t seed, std::uint64_t round,
                                 const std::vector<bool>& present = {});

}  // namespace lowcomm
