#include "lowcomm/comm/collective_pricing.hpp"

#include <fmt/format.h>

#include <vector>

#include "lowcomm/error.hpp"

namespace lowcomm {

CollectivePricing::CollectivePricing(const NetworkModel& network, AllReduceAlgorithm all_reduce,
                                     AllGatherAlgorithm all_gather, int rank, int size)
    : network_(network), all_reduce_(all_reduce), all_gather_(all_gather), rank_(rank), size_(size) {}

RankCost CollectivePricing::of_this_rank(const CollectiveCost& cost) const {
  const auto r = static_cast<std::size_t>(rank_);
  return {cost.seconds, cost.bytes_sent[r], cost.bytes_received[r]};
}

template <class Compute>
RankCost CollectivePricing::cached(const Key& key, Compute&& compute) {
  if (const auto hit = cache_.find(key); hit != cache_.end()) return hit->second;
  const RankCost cost = of_this_rank(compute());
  if (cache_.size() >= kCacheEntries) cache_.clear();
  cache_.emplace(key, cost);
  return cost;
}

RankCost CollectivePricing::all_reduce(std::size_t count, std::size_t element_bytes) {
  return cached({CollectiveKind::AllReduce, count, element_bytes},
                [&] { return network_.all_reduce(all_reduce_, size_, count, element_bytes); });
}

RankCost CollectivePricing::all_gather(std::uint64_t block_bytes) {
  return cached({CollectiveKind::AllGather, block_bytes, 0}, [&] {
    const std::vector<std::uint64_t> blocks(static_cast<std::size_t>(size_), block_bytes);
    return network_.all_gather(all_gather_, blocks);
  });
}

RankCost CollectivePricing::all_gather_v(std::span<const std::uint64_t> block_bytes) {
  // Variable sizes change from call to call: not cached.
  return of_this_rank(network_.all_gather(all_gather_, block_bytes));
}

RankCost CollectivePricing::broadcast(std::uint64_t bytes, int root) {
  if (root < 0 || root >= size_) {
    throw CommError(fmt::format("broadcast root {} is not a rank (this communicator has {})", root, size_));
  }
  return cached({CollectiveKind::Broadcast, bytes, static_cast<std::uint64_t>(root)},
                [&] { return network_.broadcast(size_, root, bytes); });
}

RankCost CollectivePricing::pair_exchange(std::span<const int> sends_to, std::uint64_t bytes) const {
  // Pairings change from round to round: not cached (one round, linear in the ranks).
  const std::vector<std::uint64_t> each(static_cast<std::size_t>(size_), bytes);
  return of_this_rank(network_.pair_exchange(sends_to, each));
}

RankCost CollectivePricing::all_to_all(std::uint64_t block_bytes) {
  return cached({CollectiveKind::AllToAll, block_bytes, 0}, [&] { return network_.all_to_all(size_, block_bytes); });
}

RankCost CollectivePricing::barrier() {
  return cached({CollectiveKind::Barrier, 0, 0}, [&] { return network_.barrier(size_); });
}

}  // namespace lowcomm
