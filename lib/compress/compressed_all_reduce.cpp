#include "lowcomm/compress/compressed_all_reduce.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "gathered_frames.hpp"
#include "lowcomm/core/timeline.hpp"
#include "lowcomm/core/timing.hpp"
#include "lowcomm/error.hpp"

namespace lowcomm {

std::vector<std::vector<std::size_t>> bucket_partition(std::span<const TensorInfo> tensors, std::uint64_t bucket_bytes) {
  if (bucket_bytes == 0) throw ConfigError("the bucket size must be positive");
  std::vector<std::vector<std::size_t>> buckets;
  std::vector<std::size_t> members;
  std::uint64_t bytes = 0;
  for (std::size_t t = 0; t < tensors.size(); ++t) {
    const std::uint64_t size = static_cast<std::uint64_t>(tensors[t].numel()) * sizeof(float);
    if (!members.empty() && bytes + size > bucket_bytes) {
      buckets.push_back(std::move(members));
      members.clear();
      bytes = 0;
    }
    members.push_back(t);
    bytes += size;
  }
  if (!members.empty()) buckets.push_back(std::move(members));
  return buckets;
}

std::vector<CompressionUnit> compression_units(std::span<const TensorInfo> tensors, Granularity granularity,
                                               std::uint64_t bucket_bytes) {
  std::vector<CompressionUnit> units;
  auto flat_unit = [&](std::string name, std::vector<std::size_t> members) {
    std::int64_t numel = 0;
    for (std::size_t t : members) numel += tensors[t].numel();
    units.push_back({static_cast<std::uint32_t>(units.size()), std::move(name), {numel}, std::move(members), numel});
  };
  switch (granularity) {
    case Granularity::PerTensor:
      for (std::size_t t = 0; t < tensors.size(); ++t) {
        units.push_back({static_cast<std::uint32_t>(t), tensors[t].name, tensors[t].shape, {t}, tensors[t].numel()});
      }
      break;
    case Granularity::Bucket:
      for (std::vector<std::size_t>& members : bucket_partition(tensors, bucket_bytes)) {
        flat_unit(fmt::format("bucket{}", units.size()), std::move(members));
      }
      break;
    case Granularity::Global: {
      std::vector<std::size_t> all(tensors.size());
      for (std::size_t t = 0; t < all.size(); ++t) all[t] = t;
      flat_unit("global", std::move(all));
      break;
    }
  }
  return units;
}

CompressedAllReduce::CompressedAllReduce(Communicator& comm, std::unique_ptr<Compressor> compressor,
                                         std::vector<TensorInfo> tensors, Granularity granularity,
                                         std::uint64_t bucket_bytes, std::uint64_t shared_seed,
                                         ExecutionContext execution, Participation participation,
                                         std::vector<int> merge_groups)
    : comm_(comm), compressor_(std::move(compressor)), tensors_(std::move(tensors)), shared_seed_(shared_seed),
      execution_(execution), participation_(std::move(participation)), merge_groups_(std::move(merge_groups)) {
  if (!compressor_) throw Error("CompressedAllReduce needs a compressor");
  if (!compressor_->supports(granularity)) {
    throw ConfigError(fmt::format("this compressor does not support granularity '{}'", to_string(granularity)));
  }
  if (!participation_.always_everyone() && participation_.world_size() != comm_.size()) {
    throw Error(fmt::format("CompressedAllReduce: a participation model of {} ranks on a communicator of {}",
                            participation_.world_size(), comm_.size()));
  }
  if (compressor_->aggregation() == Aggregation::Merged) {
    merge_rounds_ = merge_rounds(comm_.size(), merge_groups_);
  } else if (!merge_groups_.empty()) {
    throw ConfigError("compressor.merge_groups groups the ranks of a merged exchange (the exchange = \"tree\" of "
                      "compressor none, topk, dct_topk or sparseloco); this compressor gathers or sums: unset "
                      "merge_groups, or use the tree");
  }
  units_ = compression_units(tensors_, granularity, bucket_bytes);
  scratch_.resize(units_.size());
}

UnitContext CompressedAllReduce::context(const Unit& unit, std::uint64_t step) const {
  return {.step = step, .unit_id = unit.id, .name = unit.name, .shape = unit.shape,
          .rank = comm_.rank(), .world_size = comm_.size(), .participants = participants_,
          .present = present_.empty() || present_[static_cast<std::size_t>(comm_.rank())],
          .shared_seed = shared_seed_, .execution = execution_};
}

// A round's collectives, started by begin_exchange and completed by end_exchange, with what
// end_exchange needs to hand each unit its part.
struct CompressedAllReduce::RoundExchange {
  std::vector<PendingCollective> pending;  // empty when the collectives ran blocking
  std::vector<bool> summing;  // per unit: it sent a Sum message
  std::vector<std::pair<std::size_t, std::size_t>> sum_ranges;  // per unit: offset, length in summed_
  struct SixteenBit {
    kernels::ValueType wire;
    std::size_t begin, length;  // the range of summed_ (and of summed_16bit_) it carries
  };
  std::vector<SixteenBit> sixteen_bit;
  std::vector<std::size_t> gathering;  // the units of the all-gather, in frame order
  std::vector<std::size_t> sizes;      // their payload sizes (fixed sizes only)
  std::vector<std::size_t> counts;     // bytes per rank of the all-gather
  std::vector<std::byte> mine;         // this rank's frame
  bool fixed_sizes = true;
  std::vector<std::size_t> merging;             // the units of the merge, in order
  std::vector<std::vector<std::byte>> merged;   // their payloads merged over every rank
  double merge_s = 0.0;                         // time in Compressor::merge (codec time)
};

// One step from start() to finish().
struct CompressedAllReduce::Flight {
  std::uint64_t step = 0;
  SyncReport report;
  CommCounters before;
  std::vector<std::optional<Message>> messages;
  std::vector<std::vector<float>> fused_in;  // the inputs of units of several tensors
  RoundExchange exchange;
};

SyncReport& SyncReport::operator+=(const SyncReport& other) {
  comm += other.comm;
  codec_s += other.codec_s;
  payload_bytes += other.payload_bytes;
  rounds = std::max(rounds, other.rounds);
  present = present && other.present;
  return *this;
}

CompressedAllReduce::~CompressedAllReduce() = default;

void CompressedAllReduce::check_shapes(std::span<const std::span<const float>> gradients) const {
  if (gradients.size() != tensors_.size()) {
    throw Error(fmt::format("CompressedAllReduce: expected {} tensors, got {}", tensors_.size(), gradients.size()));
  }
  for (std::size_t t = 0; t < tensors_.size(); ++t) {
    const auto n = static_cast<std::size_t>(tensors_[t].numel());
    if (gradients[t].size() != n) {
      throw Error(fmt::format("CompressedAllReduce: tensor '{}' has {} elements, got {}", tensors_[t].name, n,
                              gradients[t].size()));
    }
  }
}

void CompressedAllReduce::check_message(Flight& flight, std::size_t u, int round, const Message& message) const {
  const Aggregation aggregation = compressor_->aggregation();
  const Exchange declared = aggregation == Aggregation::Summable  ? Exchange::Sum
                            : aggregation == Aggregation::Merged ? Exchange::Merge
                                                                 : Exchange::GatherBytes;
  const bool allowed = (aggregation == Aggregation::MultiRound && message.exchange != Exchange::Merge) ||
                       (round == 0 && message.exchange == declared);
  if (!allowed) {
    const char* kind = message.exchange == Exchange::Sum ? "sum" : message.exchange == Exchange::Merge ? "merge" : "gather";
    throw Error(fmt::format("compressor declared {} aggregation but sent a {} message in round {} of unit '{}'",
                            to_string(aggregation), kind, round, units_[u].name));
  }
  const auto expected = compressor_->wire_bytes(context(units_[u], flight.step), round);
  if (expected && *expected != message.wire_bytes()) {
    throw Error(fmt::format("compressor declared {} payload bytes for unit '{}' round {} but sent {}", *expected,
                            units_[u].name, round, message.wire_bytes()));
  }
  if (present_.empty() || present_[static_cast<std::size_t>(comm_.rank())]) {
    flight.report.payload_bytes += message.wire_bytes();  // an absent rank's message is not sent
  }
}

SyncReport CompressedAllReduce::run(std::uint64_t step, std::span<const std::span<const float>> gradients,
                                    std::span<const std::span<float>> aggregates) {
  SyncReport report = begin(step, gradients, /*overlap=*/false);
  report += finish(aggregates);
  return report;
}

SyncReport CompressedAllReduce::start(std::uint64_t step, std::span<const std::span<const float>> gradients) {
  return begin(step, gradients, /*overlap=*/true);
}

SyncReport CompressedAllReduce::begin(std::uint64_t step, std::span<const std::span<const float>> gradients, bool overlap) {
  if (flight_) throw Error(fmt::format("CompressedAllReduce: step {} started while step {} is in flight", step,
                                       flight_->step));
  check_shapes(gradients);
  present_ = participation_.present(step);
  participants_ = present_.empty() ? 0 : static_cast<int>(std::ranges::count(present_, true));
  if (compressor_->aggregation() == Aggregation::Merged && !participation_.always_everyone()) {
    merge_rounds_ = merge_rounds(comm_.size(), merge_groups_, present_);  // the tree over this step's ranks
  }
  auto flight = std::make_unique<Flight>();
  flight->step = step;
  flight->before = comm_.totals();
  flight->report.present = present_.empty() || present_[static_cast<std::size_t>(comm_.rank())];
  flight->messages.resize(units_.size());
  flight->fused_in.resize(units_.size());

  // Units of several tensors work on fused copies; a unit of one tensor uses its span directly.
  const auto start = SteadyClock::now();
  std::optional<TimelineScope> encoding(std::in_place, "codec", "encode");
  for (std::size_t u = 0; u < units_.size(); ++u) {
    const Unit& unit = units_[u];
    std::span<const float> input = gradients[unit.tensors[0]];
    if (unit.tensors.size() > 1) {
      for (std::size_t t : unit.tensors) {
        flight->fused_in[u].insert(flight->fused_in[u].end(), gradients[t].begin(), gradients[t].end());
      }
      input = flight->fused_in[u];
    }
    flight->messages[u] = compressor_->encode(context(unit, step), input, scratch_[u]);
    check_message(*flight, u, 0, *flight->messages[u]);
  }
  flight->report.codec_s += seconds_since(start);
  encoding.reset();
  flight->exchange = begin_exchange(flight->messages, 0, step, overlap);
  flight->report.codec_s += flight->exchange.merge_s;
  flight->report.comm = comm_.totals() - flight->before;
  SyncReport started = flight->report;
  flight->report = SyncReport{};  // finish() reports its own share, of the same draw
  flight->report.present = started.present;
  flight_ = std::move(flight);
  return started;
}

SyncReport CompressedAllReduce::finish(std::span<const std::span<float>> aggregates) {
  if (!flight_) throw Error("CompressedAllReduce: finish() without start()");
  std::unique_ptr<Flight> flight = std::move(flight_);
  flight->before = comm_.totals();
  std::vector<std::span<const float>> shapes(aggregates.begin(), aggregates.end());
  check_shapes(shapes);
  const std::uint64_t step = flight->step;
  std::vector<std::optional<Message>>& messages = flight->messages;

  std::vector<std::vector<float>> fused_out(units_.size());
  auto output_of = [&](std::size_t u) -> std::span<float> {
    const Unit& unit = units_[u];
    if (unit.tensors.size() == 1) return aggregates[unit.tensors[0]];
    fused_out[u].assign(static_cast<std::size_t>(unit.numel), 0.0f);
    return fused_out[u];
  };

  std::vector<Received> received(units_.size());
  for (int round = 0;; ++round) {
    if (round > 0) {
      const bool any = std::ranges::any_of(messages, [](const auto& m) { return m.has_value(); });
      if (!any) break;
      flight->exchange = begin_exchange(messages, round, step, /*overlap=*/false);
      flight->report.codec_s += flight->exchange.merge_s;
    }
    end_exchange(flight->exchange, received);
    flight->report.rounds = round + 1;
    const auto start = SteadyClock::now();
    const TimelineScope decoding("codec", "decode");
    for (std::size_t u = 0; u < units_.size(); ++u) {
      if (!messages[u]) continue;
      const std::span<float> out = round == 0 || units_[u].tensors.size() == 1 ? output_of(u)
                                                                                : std::span<float>(fused_out[u]);
      messages[u] = compressor_->decode(context(units_[u], step), round, received[u], scratch_[u], out);
      if (messages[u]) check_message(*flight, u, round + 1, *messages[u]);
    }
    flight->report.codec_s += seconds_since(start);
  }

  for (std::size_t u = 0; u < units_.size(); ++u) {
    if (units_[u].tensors.size() == 1) continue;
    std::size_t offset = 0;
    for (std::size_t t : units_[u].tensors) {
      std::copy_n(fused_out[u].begin() + static_cast<std::ptrdiff_t>(offset), aggregates[t].size(), aggregates[t].begin());
      offset += aggregates[t].size();
    }
  }
  flight->report.comm = comm_.totals() - flight->before;
  return flight->report;
}

CompressedAllReduce::RoundExchange CompressedAllReduce::begin_exchange(const std::vector<std::optional<Message>>& messages,
                                                                  int round, std::uint64_t step, bool overlap) {
  RoundExchange exchange;
  std::vector<float>& summed = summed_;
  const bool absent = !present_.empty() && !present_[static_cast<std::size_t>(comm_.rank())];

  // Every Sum message of the round travelling as the same value type: one all-reduce of their
  // concatenation (fp32 first, then fp16, then bf16, each range its own collective).
  summed.clear();
  exchange.summing.assign(messages.size(), false);
  exchange.sum_ranges.assign(messages.size(), {0, 0});
  for (const kernels::ValueType wire : {kernels::ValueType::F32, kernels::ValueType::F16, kernels::ValueType::BF16}) {
    const std::size_t begin = summed.size();
    for (std::size_t u = 0; u < messages.size(); ++u) {
      if (!messages[u] || messages[u]->exchange != Exchange::Sum || messages[u]->wire != wire) continue;
      const std::span<const float> values = messages[u]->sum_values();
      exchange.summing[u] = true;
      exchange.sum_ranges[u] = {summed.size(), values.size()};
      if (absent) {
        summed.insert(summed.end(), values.size(), 0.0f);  // the rank's share of the sum is missing
      } else {
        summed.insert(summed.end(), values.begin(), values.end());
      }
    }
    if (summed.size() > begin && wire != kernels::ValueType::F32) {
      exchange.sixteen_bit.push_back({wire, begin, summed.size() - begin});
    }
  }
  // The buffers are complete before any collective starts: a non-blocking one must not see them
  // reallocated.
  const std::size_t fp32_end = exchange.sixteen_bit.empty() ? summed.size() : exchange.sixteen_bit.front().begin;
  summed_16bit_.resize(summed.size() - fp32_end);
  if (fp32_end > 0) {
    const std::span<float> range = std::span<float>(summed).first(fp32_end);
    if (overlap) {
      exchange.pending.push_back(comm_.start_all_reduce(range, ReduceOp::Sum));
    } else {
      comm_.all_reduce(range, ReduceOp::Sum);
    }
  }
  for (const RoundExchange::SixteenBit& part : exchange.sixteen_bit) {
    const std::span<std::uint16_t> bits = std::span(summed_16bit_).subspan(part.begin - fp32_end, part.length);
    kernels::encode_values(execution_.backend, std::span<const float>(summed).subspan(part.begin, part.length), part.wire,
                           std::as_writable_bytes(bits));
    if (overlap) {
      exchange.pending.push_back(comm_.start_all_reduce_16bit(bits, part.wire));
    } else {
      comm_.all_reduce_16bit(bits, part.wire);
    }
  }

  merge_exchange(exchange, messages, round, step);

  // Every GatherBytes message of the round: one all-gather. Fixed-size payloads (declared by the
  // compressor, identical on every rank) need no size table, and no sizes exchanged even when
  // some rank is absent: every rank knows who is, and an absent rank's frame is empty. Sizes
  // that vary are all-gathered first, and an absent rank's frame is then its table of zeros.
  exchange.fixed_sizes = true;
  for (std::size_t u = 0; u < messages.size(); ++u) {
    if (!messages[u] || messages[u]->exchange != Exchange::GatherBytes) continue;
    exchange.gathering.push_back(u);
    exchange.fixed_sizes = exchange.fixed_sizes && compressor_->wire_bytes(context(units_[u], step), round).has_value();
  }
  if (exchange.gathering.empty()) return exchange;
  std::vector<std::span<const std::byte>> payloads;
  for (std::size_t u : exchange.gathering) {
    payloads.emplace_back(absent ? std::span<const std::byte>() : std::span<const std::byte>(messages[u]->bytes));
    exchange.sizes.push_back(messages[u]->bytes.size());
  }
  exchange.mine = compress_detail::frame_payloads(payloads, !exchange.fixed_sizes);
  const auto world = static_cast<std::size_t>(comm_.size());
  if (exchange.fixed_sizes) {
    if (absent) exchange.mine.clear();
    const std::size_t frame = compress_detail::frame_bytes(exchange.sizes, false);
    exchange.counts.assign(world, frame);
    for (std::size_t w = 0; w < present_.size(); ++w) {
      if (!present_[w]) exchange.counts[w] = 0;
    }
  } else {
    // The sizes first (one 8-byte count per rank, counted), blocking: the data's layout needs them.
    const auto mine = static_cast<std::uint64_t>(exchange.mine.size());
    std::vector<std::uint64_t> counts(world);
    comm_.all_gather(std::span<const std::uint64_t>(&mine, 1), std::span<std::uint64_t>(counts));
    exchange.counts.assign(counts.begin(), counts.end());
  }
  gathered_.resize(std::accumulate(exchange.counts.begin(), exchange.counts.end(), std::size_t{0}));
  const std::span<const std::byte> mine(exchange.mine);
  const std::span<const std::size_t> counts(exchange.counts);
  if (overlap) {
    exchange.pending.push_back(comm_.start_all_gather_v(mine, counts, std::span<std::byte>(gathered_)));
  } else {
    comm_.all_gather_v(mine, counts, std::span<std::byte>(gathered_));
  }
  return exchange;
}

// Every Merge message of the round, through the merge tree (merge_schedule.hpp), blocking: each
// of its rounds one send_pairs of all the units' payloads back to back, then Compressor::merge per
// unit where the round merges, a copy where it hands a result on.
void CompressedAllReduce::merge_exchange(RoundExchange& exchange, const std::vector<std::optional<Message>>& messages,
                                         int round, std::uint64_t step) {
  std::vector<std::size_t> sizes;
  std::size_t total = 0;
  for (std::size_t u = 0; u < messages.size(); ++u) {
    if (!messages[u] || messages[u]->exchange != Exchange::Merge) continue;
    if (!compressor_->wire_bytes(context(units_[u], step), round)) {
      throw Error(fmt::format("unit '{}': a merged payload needs a size the compressor declares (wire_bytes)",
                              units_[u].name));
    }
    exchange.merging.push_back(u);
    exchange.merged.push_back(messages[u]->bytes);
    sizes.push_back(messages[u]->bytes.size());
    total += sizes.back();
  }
  if (exchange.merging.empty()) return;
  std::vector<std::byte> mine(total), theirs(total);
  const auto start = SteadyClock::now();
  double exchanging_s = 0.0;
  for (const MergeRound& merge_round : merge_rounds_) {
    std::size_t offset = 0;
    for (const std::vector<std::byte>& payload : exchange.merged) {
      std::ranges::copy(payload, mine.begin() + static_cast<std::ptrdiff_t>(offset));
      offset += payload.size();
    }
    const auto exchanging = SteadyClock::now();
    comm_.send_pairs(std::span<const int>(merge_round.sends_to), std::span<const std::byte>(mine),
                     std::span<std::byte>(theirs));
    exchanging_s += seconds_since(exchanging);
    const int from = merge_source(merge_round, comm_.rank());
    if (from < 0) continue;  // sends only, or sits the round out
    offset = 0;
    for (std::size_t g = 0; g < exchange.merging.size(); ++g) {
      const std::span<const std::byte> other = std::span<const std::byte>(theirs).subspan(offset, sizes[g]);
      offset += sizes[g];
      if (merge_round.copy) {
        exchange.merged[g].assign(other.begin(), other.end());
        continue;
      }
      std::vector<std::byte> merged = compressor_->merge(context(units_[exchange.merging[g]], step), exchange.merged[g], other);
      if (merged.size() != sizes[g]) {
        throw Error(fmt::format("unit '{}': merging two {}-byte payloads gave {} bytes", units_[exchange.merging[g]].name,
                                sizes[g], merged.size()));
      }
      exchange.merged[g] = std::move(merged);
    }
  }
  exchange.merge_s = seconds_since(start) - exchanging_s;
}

void CompressedAllReduce::end_exchange(RoundExchange& exchange, std::vector<Received>& received) {
  for (PendingCollective& pending : exchange.pending) pending.wait();
  for (Received& r : received) r = Received{};
  const std::size_t fp32_end = exchange.sixteen_bit.empty() ? summed_.size() : exchange.sixteen_bit.front().begin;
  for (const RoundExchange::SixteenBit& part : exchange.sixteen_bit) {
    kernels::decode_values(execution_.backend, std::as_bytes(std::span(summed_16bit_).subspan(part.begin - fp32_end, part.length)),
                           part.wire, std::span<float>(summed_).subspan(part.begin, part.length));
  }
  for (std::size_t g = 0; g < exchange.merging.size(); ++g) received[exchange.merging[g]].merged = exchange.merged[g];
  for (std::size_t u = 0; u < received.size(); ++u) {
    if (exchange.summing[u]) {
      received[u].sum = std::span<const float>(summed_).subspan(exchange.sum_ranges[u].first, exchange.sum_ranges[u].second);
    }
  }
  if (exchange.gathering.empty()) return;
  // Fixed sizes: the gathered bytes are the present ranks' frames back to back, cut as such.
  // Variable sizes: every rank's frame, an absent rank's holding its table of zeros.
  std::vector<int> present_ranks;
  for (std::size_t w = 0; w < present_.size(); ++w) {
    if (present_[w]) present_ranks.push_back(static_cast<int>(w));
  }
  std::vector<std::size_t> frames;
  for (std::size_t w = 0; w < exchange.counts.size(); ++w) {
    if (!exchange.fixed_sizes || present_.empty() || present_[w]) frames.push_back(exchange.counts[w]);
  }
  auto split = compress_detail::split_frames(
      gathered_, frames, exchange.gathering.size(),
      exchange.fixed_sizes ? std::optional(std::span<const std::size_t>(exchange.sizes)) : std::nullopt,
      exchange.fixed_sizes ? std::span<const int>(present_ranks) : std::span<const int>());
  for (std::size_t g = 0; g < exchange.gathering.size(); ++g) {
    std::vector<std::span<const std::byte>>& from = split[g];
    if (!exchange.fixed_sizes && !present_.empty()) {  // an absent rank's empty payload is no message
      std::size_t kept = 0;
      for (std::size_t w = 0; w < from.size(); ++w) {
        if (present_[w]) from[kept++] = from[w];
      }
      from.resize(kept);
    }
    received[exchange.gathering[g]].gathered = std::move(from);
    received[exchange.gathering[g]].senders = present_ranks;
  }
}

}  // namespace lowcomm
