#pragma once
// Each modelled collective algorithm written out as the rounds of point-to-point messages it
// sends. One description serves two purposes: the exact bytes every rank sends and receives,
// and the modelled time (a round lasts as long as its slowest message). Rounds are produced one
// at a time, so memory stays O(W) even for algorithms with O(W^2) messages in total.
#include <cstdint>
#include <functional>
#include <span>

#include "lowcomm/comm/collective.hpp"

namespace lowcomm {

struct Transfer {
  int source;
  int destination;
  std::uint64_t bytes;
};

// Called once per round with all the messages of that round (they run concurrently).
using RoundVisitor = std::function<void(std::span<const Transfer>)>;

// All-reduce of `count` elements of `element_bytes` each on every one of `world_size` ranks.
// Chunks are whole elements (sizes differ by at most one element when W does not divide count).
void ring_all_reduce_rounds(int world_size, std::uint64_t count, std::uint64_t element_bytes,
                            const RoundVisitor& visit);
// Non-powers of two fold the first 2r ranks pairwise first (r = W - 2^floor(log2 W)) and send the
// result back at the end, as MPICH does.
void rabenseifner_all_reduce_rounds(int world_size, std::uint64_t count,
                                    std::uint64_t element_bytes, const RoundVisitor& visit);

// All-gather where rank w contributes block_bytes[w] bytes (equal or variable sizes).
void ring_all_gather_rounds(std::span<const std::uint64_t> block_bytes, const RoundVisitor& visit);
void recursive_doubling_all_gather_rounds(std::span<const std::uint64_t> block_bytes,
                                          const RoundVisitor& visit);  // W a power of two
void bruck_all_gather_rounds(std::span<const std::uint64_t> block_bytes, const RoundVisitor& visit);

void binomial_broadcast_rounds(int world_size, int root, std::uint64_t bytes,
                               const RoundVisitor& visit);
// Pairwise-exchange all-to-all: W - 1 rounds; in round d every rank w sends its block for rank
// (w + d) mod W, `block_bytes` long (its own block stays where it is).
void pairwise_all_to_all_rounds(int world_size, std::uint64_t block_bytes, const RoundVisitor& visit);
// Dissemination barrier: ceil(log2 W) rounds of empty messages.
void dissemination_barrier_rounds(int world_size, const RoundVisitor& visit);

// Dispatch by algorithm (the Communicator and NetworkModel use these).
void all_reduce_rounds(AllReduceAlgorithm algorithm, int world_size, std::uint64_t count,
                       std::uint64_t element_bytes, const RoundVisitor& visit);
void all_gather_rounds(AllGatherAlgorithm algorithm, std::span<const std::uint64_t> block_bytes,
                       const RoundVisitor& visit);

bool is_power_of_two(int n);

}  // namespace lowcomm
