#pragma once
// The Hockney (alpha-beta) cost model of a network, per rank: each rank has a link with a
// latency, an upload and a download bandwidth. A collective is charged round by round from the
// messages its algorithm sends (collective_schedule.hpp): a round lasts as long as its largest
// latency plus the longest time any rank needs to push its bytes up or pull them down. With
// identical links this reduces to REFERENCE.md §6's closed forms; with a slow rank the slow
// link bounds every round it takes part in, as it does on a real ring. Between two ranks a path
// of its own may be set (a pair link: one-way latency and bandwidth, for each direction apart):
// a message on it pays that latency instead of the ranks' and is bounded by that bandwidth too,
// so ring order and placement across regions matter as on a real wide-area network.
#include <cstdint>
#include <limits>
#include <map>
#include <span>
#include <utility>
#include <vector>

#include "lowcomm/comm/collective.hpp"
#include "lowcomm/comm/collective_schedule.hpp"

namespace lowcomm {

struct Link {
  double latency_s = 0.0;  // one-way; a message between two ranks pays the larger of their two
  double upload_bytes_per_s = std::numeric_limits<double>::infinity();
  double download_bytes_per_s = std::numeric_limits<double>::infinity();

  friend bool operator==(const Link&, const Link&) = default;
};

// The path from one rank to another: its one-way latency and its bandwidth.
struct PairLink {
  double latency_s = 0.0;
  double bytes_per_s = std::numeric_limits<double>::infinity();
  friend bool operator==(const PairLink&, const PairLink&) = default;
};

// Megabits per second (as links are advertised) to bytes per second.
constexpr double mbps(double megabits_per_s) { return megabits_per_s * 1e6 / 8.0; }

// What one collective costs on the modelled network: time, and each rank's traffic.
struct CollectiveCost {
  double seconds = 0.0;
  std::vector<std::uint64_t> bytes_sent;      // indexed by rank
  std::vector<std::uint64_t> bytes_received;  // indexed by rank
};

class NetworkModel {
 public:
  NetworkModel() = default;  // an ideal network: no latency, infinite bandwidth
  // Throws ConfigError for a negative or non-finite latency, or a bandwidth that is not > 0.
  explicit NetworkModel(Link every_rank);

  // A different link for one rank (a straggler, a home connection in a datacenter job).
  NetworkModel& set_rank_link(int rank, Link link);
  Link link(int rank) const;
  const Link& default_link() const { return default_link_; }
  const std::map<int, Link>& rank_links() const { return rank_links_; }
  // The path from `source` to `destination` (one direction). Throws ConfigError for a rank < 0,
  // a pair of one rank, or an invalid latency or bandwidth.
  NetworkModel& set_pair_link(int source, int destination, PairLink link);
  const std::map<std::pair<int, int>, PairLink>& pair_links() const { return pair_links_; }

  // Cost of an arbitrary sequence of rounds (produce them with collective_schedule.hpp).
  template <class Producer>
  CollectiveCost cost_of(int world_size, Producer&& produce_rounds) const {
    Accumulator acc(*this, world_size);
    produce_rounds([&acc](std::span<const Transfer> round) { acc.add_round(round); });
    return acc.result();
  }

  CollectiveCost all_reduce(AllReduceAlgorithm algorithm, int world_size, std::uint64_t count,
                            std::uint64_t element_bytes) const;
  CollectiveCost all_gather(AllGatherAlgorithm algorithm,
                            std::span<const std::uint64_t> block_bytes) const;
  CollectiveCost broadcast(int world_size, int root, std::uint64_t bytes) const;
  CollectiveCost barrier(int world_size) const;
  // One round in which each rank r with sends_to[r] = p >= 0 sends bytes[r] to p, over
  // world_size = sends_to.size() ranks (-1: the rank sends nothing; a matching is a swap).
  CollectiveCost pair_exchange(std::span<const int> sends_to, std::span<const std::uint64_t> bytes) const;
  // Every rank sends a block of `block_bytes` to every other: the pairwise exchange, W - 1 rounds.
  CollectiveCost all_to_all(int world_size, std::uint64_t block_bytes) const;

 private:
  // Sums round times and per-rank bytes while the rounds are produced.
  class Accumulator {
   public:
    Accumulator(const NetworkModel& model, int world_size);
    void add_round(std::span<const Transfer> round);
    CollectiveCost result() { return std::move(cost_); }

   private:
    const NetworkModel& model_;
    std::vector<Link> links_;
    std::vector<std::uint64_t> round_sent_, round_received_;
    CollectiveCost cost_;
  };

  Link default_link_;
  std::map<int, Link> rank_links_;
  std::map<std::pair<int, int>, PairLink> pair_links_;  // by (source, destination)
};

}  // namespace lowcomm
