#pragma once
// The collectives lowcomm runs and the algorithms whose traffic it models for each.
#include <cstdint>
#include <string_view>

namespace lowcomm {

// PairExchange: every rank calls it together, but data moves only between the two ranks of each
// pair of a matching (Communicator::exchange_pairs), as gossip methods exchange. AllToAll: each
// rank sends a block of its own to every other (Communicator::all_to_all), as 1-bit Adam's first
// phase hands each rank its chunk of everyone's momentum.
enum class CollectiveKind : std::uint8_t { AllReduce, AllGather, Broadcast, Barrier, PairExchange, AllToAll };
inline constexpr int kCollectiveKinds = 6;

// Which algorithm the network model charges an all-reduce with (REFERENCE.md §6).
enum class AllReduceAlgorithm : std::uint8_t {
  Ring,          // reduce-scatter + all-gather around a ring: 2(W-1) rounds
  Rabenseifner,  // recursive halving + doubling: 2 log2(W) rounds; 2 floor(log2 W) + 2 otherwise
};

// Which algorithm the network model charges an all-gather with.
enum class AllGatherAlgorithm : std::uint8_t {
  Ring,               // W-1 rounds, one block per round
  RecursiveDoubling,  // log2(W) rounds; W must be a power of two
  Bruck,              // ceil(log2 W) rounds for any W
};

enum class ReduceOp : std::uint8_t { Sum, Average };

std::string_view to_string(CollectiveKind kind);
std::string_view to_string(AllReduceAlgorithm algorithm);
std::string_view to_string(AllGatherAlgorithm algorithm);

// Parse the names used in configuration files ("ring", "rabenseifner", "recursive_doubling",
// "bruck"); throw ConfigError listing the valid names otherwise.
AllReduceAlgorithm parse_all_reduce_algorithm(std::string_view name);
AllGatherAlgorithm parse_all_gather_algorithm(std::string_view name);

}  // namespace lowcomm
