#include "lowcomm/comm/network_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "lowcomm/error.hpp"

namespace lowcomm {

namespace {

// Infinite bandwidth is allowed (an ideal link); an infinite latency is not: no message would
// ever arrive, and the times it produced would be NaN.
void require_valid(const Link& link, std::string_view whose) {
  const bool ok = link.latency_s >= 0 && std::isfinite(link.latency_s) && link.upload_bytes_per_s > 0 &&
                  link.download_bytes_per_s > 0;
  if (!ok) {
    throw ConfigError(fmt::format(
        "the network link of {} is invalid (latency {} s, upload {} B/s, download {} B/s): "
        "latency must be finite and >= 0, bandwidths > 0", whose, link.latency_s, link.upload_bytes_per_s,
        link.download_bytes_per_s));
  }
}

}  // namespace

NetworkModel::NetworkModel(Link every_rank) : default_link_(every_rank) { require_valid(every_rank, "every rank"); }

NetworkModel& NetworkModel::set_rank_link(int rank, Link link) {
  if (rank < 0) throw ConfigError(fmt::format("a rank link needs a rank >= 0, got {}", rank));
  require_valid(link, fmt::format("rank {}", rank));
  rank_links_[rank] = link;
  return *this;
}

NetworkModel& NetworkModel::set_pair_link(int source, int destination, PairLink link) {
  if (source < 0 || destination < 0 || source == destination) {
    throw ConfigError(fmt::format("a pair link joins two different ranks >= 0, got {} -> {}", source, destination));
  }
  if (!(link.latency_s >= 0) || !std::isfinite(link.latency_s) || !(link.bytes_per_s > 0)) {
    throw ConfigError(fmt::format("the link from rank {} to rank {} is invalid (latency {} s, {} B/s): latency must "
                                  "be finite and >= 0, bandwidth > 0", source, destination, link.latency_s,
                                  link.bytes_per_s));
  }
  pair_links_[{source, destination}] = link;
  return *this;
}

Link NetworkModel::link(int rank) const {
  const auto it = rank_links_.find(rank);
  return it == rank_links_.end() ? default_link_ : it->second;
}

NetworkModel::Accumulator::Accumulator(const NetworkModel& model, int world_size)
    : model_(model),
      round_sent_(static_cast<std::size_t>(world_size)),
      round_received_(static_cast<std::size_t>(world_size)) {
  links_.reserve(static_cast<std::size_t>(world_size));
  for (int w = 0; w < world_size; ++w) links_.push_back(model_.link(w));
  cost_.bytes_sent.assign(static_cast<std::size_t>(world_size), 0);
  cost_.bytes_received.assign(static_cast<std::size_t>(world_size), 0);
}

void NetworkModel::Accumulator::add_round(std::span<const Transfer> round) {
  // A message pays its pair's latency, or the larger of its two ranks'; its pair's bandwidth, if
  // any, bounds it as well as the ranks' own links do.
  double latency = 0.0, transfer = 0.0;
  for (const Transfer& t : round) {
    const auto pair = model_.pair_links_.find({t.source, t.destination});
    if (pair != model_.pair_links_.end()) {
      latency = std::max(latency, pair->second.latency_s);
      transfer = std::max(transfer, static_cast<double>(t.bytes) / pair->second.bytes_per_s);
    } else {
      latency = std::max({latency, links_[t.source].latency_s, links_[t.destination].latency_s});
    }
    round_sent_[t.source] += t.bytes;
    round_received_[t.destination] += t.bytes;
  }
  // Upload and download are separate directions: a rank sends and receives at the same time.
  for (const Transfer& t : round) {
    for (int w : {t.source, t.destination}) {
      const auto i = static_cast<std::size_t>(w);
      if (round_sent_[i] == 0 && round_received_[i] == 0) continue;  // already counted
      transfer = std::max({transfer,
                           static_cast<double>(round_sent_[i]) / links_[i].upload_bytes_per_s,
                           static_cast<double>(round_received_[i]) / links_[i].download_bytes_per_s});
      cost_.bytes_sent[i] += round_sent_[i];
      cost_.bytes_received[i] += round_received_[i];
      round_sent_[i] = 0;
      round_received_[i] = 0;
    }
  }
  cost_.seconds += latency + transfer;
}

CollectiveCost NetworkModel::all_reduce(AllReduceAlgorithm algorithm, int world_size,
                                        std::uint64_t count, std::uint64_t element_bytes) const {
  return cost_of(world_size, [&](const RoundVisitor& visit) {
    all_reduce_rounds(algorithm, world_size, count, element_bytes, visit);
  });
}

CollectiveCost NetworkModel::all_gather(AllGatherAlgorithm algorithm,
                                        std::span<const std::uint64_t> block_bytes) const {
  return cost_of(static_cast<int>(block_bytes.size()),
                 [&](const RoundVisitor& visit) { all_gather_rounds(algorithm, block_bytes, visit); });
}

CollectiveCost NetworkModel::broadcast(int world_size, int root, std::uint64_t bytes) const {
  return cost_of(world_size, [&](const RoundVisitor& visit) {
    binomial_broadcast_rounds(world_size, root, bytes, visit);
  });
}

CollectiveCost NetworkModel::barrier(int world_size) const {
  return cost_of(world_size,
                 [&](const RoundVisitor& visit) { dissemination_barrier_rounds(world_size, visit); });
}

CollectiveCost NetworkModel::all_to_all(int world_size, std::uint64_t block_bytes) const {
  return cost_of(world_size,
                 [&](const RoundVisitor& visit) { pairwise_all_to_all_rounds(world_size, block_bytes, visit); });
}

CollectiveCost NetworkModel::pair_exchange(std::span<const int> sends_to, std::span<const std::uint64_t> bytes) const {
  std::vector<Transfer> round;
  for (std::size_t r = 0; r < sends_to.size(); ++r) {
    if (sends_to[r] >= 0) round.push_back({static_cast<int>(r), sends_to[r], bytes[r]});
  }
  return cost_of(static_cast<int>(sends_to.size()), [&](const RoundVisitor& visit) { visit(round); });
}

}  // namespace lowcomm
