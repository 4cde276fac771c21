#pragma once
// What the network model charges one rank for each collective call (network_model.hpp), the
// Communicator's pricing layer. Training repeats the same collectives every step, so costs are
// cached by (kind, size, root): a hit costs a map lookup instead of walking the algorithm's
// rounds. No MPI: tests/comm/collective_pricing_test.cpp prices calls directly.
#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <tuple>

#include "lowcomm/comm/collective.hpp"
#include "lowcomm/comm/network_model.hpp"

namespace lowcomm {

// One call's price on one rank: the modelled seconds (the slowest rank's: a collective ends for
// all at once), and this rank's bytes.
struct RankCost {
  double seconds = 0.0;
  std::uint64_t bytes_sent = 0;
  std::uint64_t bytes_received = 0;
};

class CollectivePricing {
 public:
  // Prices for rank `rank` of `size` on `network`, which must outlive this.
  CollectivePricing(const NetworkModel& network, AllReduceAlgorithm all_reduce, AllGatherAlgorithm all_gather,
                    int rank, int size);

  RankCost all_reduce(std::size_t count, std::size_t element_bytes);
  RankCost all_gather(std::uint64_t block_bytes);                 // every rank's block of this size
  RankCost all_gather_v(std::span<const std::uint64_t> block_bytes);  // one per rank; not cached
  // Throws CommError for a root that is not a rank.
  RankCost broadcast(std::uint64_t bytes, int root);
  // One round of sends_to's messages, `bytes` each (Communicator::send_pairs); not cached.
  RankCost pair_exchange(std::span<const int> sends_to, std::uint64_t bytes) const;
  RankCost all_to_all(std::uint64_t block_bytes);
  RankCost barrier();

  static constexpr std::size_t kCacheEntries = 1024;

 private:
  using Key = std::tuple<CollectiveKind, std::uint64_t, std::uint64_t>;
  template <class Compute>
  RankCost cached(const Key& key, Compute&& compute);
  RankCost of_this_rank(const CollectiveCost& cost) const;

  const NetworkModel& network_;
  AllReduceAlgorithm all_reduce_;
  AllGatherAlgorithm all_gather_;
  int rank_;
  int size_;
  std::map<Key, RankCost> cache_;
};

}  // namespace lowcomm
