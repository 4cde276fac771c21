#include "lowcomm/compress/traffic.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <utility>

#include "gathered_frames.hpp"
#include "lowcomm/compress/compressed_all_reduce.hpp"
#include "lowcomm/compress/merge_schedule.hpp"
#include "lowcomm/core/splitmix.hpp"
#include "lowcomm/error.hpp"

namespace lowcomm {

namespace {

// One message of a probed unit, as begin_exchange sorts it.
struct ProbedMessage {
  Exchange exchange;
  kernels::ValueType wire;
  std::uint64_t elements;  // Sum: values summed
  std::uint64_t bytes;     // Message::wire_bytes()
  bool fixed_size;         // the compressor declared this size (GatherBytes needs no size table)
};

std::size_t wire_slot(kernels::ValueType wire) {
  switch (wire) {
    case kernels::ValueType::F32: return 0;
    case kernels::ValueType::F16: return 1;
    case kernels::ValueType::BF16: return 2;
  }
  throw Error("probe_step_traffic: unknown value type");
}

// Encode and decode one unit, answering every round with what W ranks sending this rank's
// message would return: the sum of W copies, copies of the payload, or its merge with itself (the
// payload itself on one rank). Identical payloads have the same mean however many there are, so
// a gather is answered with two copies from two ranks present: decoding W copies would cost W
// times the unit's work (minutes for llama-1.2b at W = 4096) for the same next message.
std::vector<ProbedMessage> probe_unit(Compressor& compressor, const UnitContext& context, std::uint64_t seed) {
  std::vector<float> gradient(static_cast<std::size_t>(context.numel()));
  std::uint64_t state = mix_seed({seed, context.unit_id});
  for (float& g : gradient) g = static_cast<float>(2.0 * uniform01(state) - 1.0);
  std::vector<float> aggregate(gradient.size());
  UnitScratch scratch;
  std::vector<ProbedMessage> rounds;
  std::optional<Message> message = compressor.encode(context, gradient, scratch);
  for (int round = 0; message; ++round) {
    const bool summing = message->exchange == Exchange::Sum;
    rounds.push_back({message->exchange, message->wire, summing ? message->sum_values().size() : 0,
                      message->wire_bytes(), compressor.wire_bytes(context, round).has_value()});
    Received received;
    std::vector<float> sum;
    std::vector<std::byte> merged;
    UnitContext answered = context;
    if (message->exchange == Exchange::Merge) {
      merged = context.world_size > 1 ? compressor.merge(context, message->bytes, message->bytes) : message->bytes;
      received.merged = merged;
    } else if (summing) {
      sum.assign(message->sum_values().begin(), message->sum_values().end());
      for (float& v : sum) v *= static_cast<float>(context.world_size);
      received.sum = sum;
    } else {
      const int copies = std::min(context.world_size, 2);
      received.gathered.assign(static_cast<std::size_t>(copies), std::span<const std::byte>(message->bytes));
      answered.participants = copies;
    }
    message = compressor.decode(answered, round, received, scratch, aggregate);
  }
  return rounds;
}

}  // namespace

std::vector<RoundCollectives> probe_step_traffic(Compressor& compressor, std::span<const TensorInfo> tensors,
                                                 Granularity granularity, std::uint64_t bucket_bytes,
                                                 int world_size, std::uint64_t seed, ExecutionContext execution,
                                                 std::uint64_t step) {
  if (world_size < 1) throw ConfigError(fmt::format("the world size must be at least 1, not {}", world_size));
  if (!compressor.supports(granularity)) {
    throw ConfigError(fmt::format("this compressor does not support granularity '{}'", to_string(granularity)));
  }
  // Per unit, in unit order (begin_exchange's frame order): its messages, round by round.
  std::vector<std::vector<ProbedMessage>> units;
  std::map<std::vector<std::int64_t>, std::vector<ProbedMessage>> by_shape;
  for (const CompressionUnit& unit : compression_units(tensors, granularity, bucket_bytes)) {
    auto found = by_shape.find(unit.shape);
    if (found == by_shape.end()) {
      const UnitContext context{.step = step, .unit_id = unit.id, .name = unit.name, .shape = unit.shape, .rank = 0,
                                .world_size = world_size, .shared_seed = seed, .execution = execution};
      found = by_shape.emplace(unit.shape, probe_unit(compressor, context, seed)).first;
    }
    units.push_back(found->second);
  }

  std::vector<RoundCollectives> rounds;
  for (std::size_t r = 0;; ++r) {
    RoundCollectives round;
    std::vector<std::size_t> gathered_sizes;
    bool fixed_sizes = true, any = false;
    for (const std::vector<ProbedMessage>& messages : units) {
      if (r >= messages.size()) continue;
      const ProbedMessage& m = messages[r];
      any = true;
      round.payload_bytes += m.bytes;
      if (m.exchange == Exchange::Sum) {
        round.summed[wire_slot(m.wire)] += m.elements;
      } else if (m.exchange == Exchange::Merge) {
        round.merged_bytes += m.bytes;
      } else {
        gathered_sizes.push_back(static_cast<std::size_t>(m.bytes));
        fixed_sizes = fixed_sizes && m.fixed_size;
      }
    }
    if (!any) break;
    if (!gathered_sizes.empty()) {
      round.gathers = true;
      round.gathered_bytes = compress_detail::frame_bytes(gathered_sizes, !fixed_sizes);
      round.sizes_gathered = !fixed_sizes;
    }
    rounds.push_back(round);
  }
  return rounds;
}

StepTraffic price_step_traffic(std::span<const RoundCollectives> rounds, const CommunicatorOptions& options,
                               int world_size, const std::vector<int>& merge_groups) {
  StepTraffic traffic;
  const auto world = static_cast<std::size_t>(world_size);
  traffic.bytes_sent.assign(world, 0);
  traffic.bytes_received.assign(world, 0);
  const auto charge = [&](const CollectiveCost& cost) {
    ++traffic.calls;
    traffic.modelled_s += cost.seconds;
    for (std::size_t w = 0; w < world; ++w) {
      traffic.bytes_sent[w] += cost.bytes_sent[w];
      traffic.bytes_received[w] += cost.bytes_received[w];
    }
  };
  for (const RoundCollectives& round : rounds) {
    traffic.payload_bytes += round.payload_bytes;
    for (const kernels::ValueType wire : {kernels::ValueType::F32, kernels::ValueType::F16, kernels::ValueType::BF16}) {
      const std::uint64_t elements = round.summed[wire_slot(wire)];
      if (elements == 0) continue;
      charge(options.network.all_reduce(options.all_reduce_algorithm, world_size, elements, kernels::value_bytes(wire)));
    }
    if (round.merged_bytes > 0) {  // the merge tree: every unit's payload in one message per tree round
      for (const MergeRound& merge_round : merge_rounds(world_size, merge_groups)) {
        charge(options.network.pair_exchange(merge_round.sends_to, std::vector<std::uint64_t>(world, round.merged_bytes)));
      }
    }
    if (!round.gathers) continue;
    if (round.sizes_gathered) {
      const std::vector<std::uint64_t> counts(world, sizeof(std::uint64_t));
      charge(options.network.all_gather(options.all_gather_algorithm, counts));
    }
    const std::vector<std::uint64_t> frames(world, round.gathered_bytes);
    charge(options.network.all_gather(options.all_gather_algorithm, frames));
  }
  return traffic;
}

StepTraffic price_pair_exchange(std::span<const int> partners, std::uint64_t bytes, const CommunicatorOptions& options) {
  const CollectiveCost cost =
      options.network.pair_exchange(partners, std::vector<std::uint64_t>(partners.size(), bytes));
  return {.payload_bytes = bytes,
          .calls = 1,
          .bytes_sent = cost.bytes_sent,
          .bytes_received = cost.bytes_received,
          .modelled_s = cost.seconds};
}

}  // namespace lowcomm
