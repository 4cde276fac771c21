#pragma once
// What one CompressedAllReduce step puts on the network, found without other ranks (for
// `lowcomm plan`). Every unit's messages come from the compressor's own encode and decode, fed
// a seeded random gradient and, after each round, what W ranks sending the same message would
// return; a round's messages are fused into collectives as CompressedAllReduce fuses them, and
// priced by the NetworkModel the Communicator charges. For a compressor that declares its
// payload sizes (Compressor::wire_bytes: every built-in one) the bytes are exact for any
// gradient; one whose sizes depend on the data gets the sizes of that random gradient.
//
// Units of the same shape send the same sizes, so each distinct shape is probed once: memory is
// a few copies of the largest unit, time one encode and decode of each distinct shape.
#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "lowcomm/comm/communicator.hpp"
#include "lowcomm/compress/compressor.hpp"

namespace lowcomm {

// The collectives of one round, as this rank contributes to them.
struct RoundCollectives {
  std::array<std::uint64_t, 3> summed{};  // elements all-reduced as fp32, fp16, bf16 (one collective each)
  bool gathers = false;                   // the round has an all-gather
  std::uint64_t gathered_bytes = 0;       // this rank's frame in it
  bool sizes_gathered = false;            // sizes vary: one uint64 per rank is all-gathered first
  std::uint64_t payload_bytes = 0;        // the round's messages, as SyncReport::payload_bytes counts them
  std::uint64_t merged_bytes = 0;         // this rank's payloads of the round's merge (a tree of point-to-point rounds)
};

// The rounds of step `step` of a CompressedAllReduce made with these arguments, on world_size
// ranks, every one present. The step matters to compressors whose exchange changes with it
// (PowerSGD sends dense before its start_step). Throws ConfigError when the compressor does not
// support the granularity.
std::vector<RoundCollectives> probe_step_traffic(Compressor& compressor, std::span<const TensorInfo> tensors,
                                                 Granularity granularity, std::uint64_t bucket_bytes,
                                                 int world_size, std::uint64_t seed, ExecutionContext execution,
                                                 std::uint64_t step);

// Those rounds on a modelled network: the collectives one after another, as a blocking step runs
// them (CommCounters' meaning, for every rank).
struct StepTraffic {
  std::uint64_t payload_bytes = 0;
  std::uint64_t calls = 0;
  std::vector<std::uint64_t> bytes_sent;      // indexed by rank
  std::vector<std::uint64_t> bytes_received;  // indexed by rank
  double modelled_s = 0.0;
};
// `merge_groups`: the ranks' groups of a merged exchange (merge_schedule.hpp; empty: the butterfly).
StepTraffic price_step_traffic(std::span<const RoundCollectives> rounds, const CommunicatorOptions& options,
                               int world_size, const std::vector<int>& merge_groups = {});
// A gossip round (Communicator::exchange_pairs) of `bytes` per paired rank, `partners` one entry
// per rank (-1: sits out); its payload is `bytes`, what a paired rank sends.
StepTraffic price_pair_exchange(std::span<const int> partners, std::uint64_t bytes, const CommunicatorOptions& options);

}  // namespace lowcomm
