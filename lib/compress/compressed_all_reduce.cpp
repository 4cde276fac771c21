#include "lowcomm/compress/compressed_all_reduce.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "gathered_frames.hpp"
#include "lowcomm/core/timing.hpp"
#include "lowcomm/error.hpp"

namespace lowcomm {

CompressedAllReduce::CompressedAllReduce(Communicator& comm, std::unique_ptr<Compressor> compressor,
                                         std::vector<TensorInfo> tensors, Granularity granularity,
                                         std::uint64_t bucket_bytes, std::uint64_t shared_seed,
                                         ExecutionContext execution)
    : comm_(comm), compressor_(std::move(compressor)), tensors_(std::move(tensors)), shared_seed_(shared_seed),
      execution_(execution) {
  if (!compressor_) throw Error("CompressedAllReduce needs a compressor");
  if (!compressor_->supports(granularity)) {
    throw ConfigError(fmt::format("this compressor does not support granularity '{}'", to_string(granularity)));
  }
  auto flat_unit = [&](std::string name, std::vector<std::size_t> members) {
    std::int64_t numel = 0;
    for (std::size_t t : members) numel += tensors_[t].numel();
    units_.push_back({static_cast<std::uint32_t>(units_.size()), std::move(name), {numel}, std::move(members), numel});
  };
  switch (granularity) {
    case Granularity::PerTensor:
      for (std::size_t t = 0; t < tensors_.size(); ++t) {
        units_.push_back({static_cast<std::uint32_t>(t), tensors_[t].name, tensors_[t].shape, {t}, tensors_[t].numel()});
      }
      break;
    case Granularity::Bucket: {
      if (bucket_bytes == 0) throw ConfigError("the bucket size must be positive");
      std::vector<std::size_t> members;
      std::uint64_t bytes = 0;
      for (std::size_t t = 0; t < tensors_.size(); ++t) {
        const std::uint64_t size = static_cast<std::uint64_t>(tensors_[t].numel()) * sizeof(float);
        if (!members.empty() && bytes + size > bucket_bytes) {
          flat_unit(fmt::format("bucket{}", units_.size()), std::move(members));
          members.clear();
          bytes = 0;
        }
        members.push_back(t);
        bytes += size;
      }
      if (!members.empty()) flat_unit(fmt::format("bucket{}", units_.size()), std::move(members));
      break;
    }
    case Granularity::Global: {
      std::vector<std::size_t> all(tensors_.size());
      for (std::size_t t = 0; t < all.size(); ++t) all[t] = t;
      flat_unit("global", std::move(all));
      break;
    }
  }
  scratch_.resize(units_.size());
}

UnitContext CompressedAllReduce::context(const Unit& unit, std::uint64_t step) const {
  return {.step = step, .unit_id = unit.id, .name = unit.name, .shape = unit.shape,
          .rank = comm_.rank(), .world_size = comm_.size(), .shared_seed = shared_seed_,
          .execution = execution_};
}

SyncReport CompressedAllReduce::run(std::uint64_t step, std::span<const std::span<const float>> gradients,
                                    std::span<const std::span<float>> aggregates) {
  if (gradients.size() != tensors_.size() || aggregates.size() != tensors_.size()) {
    throw Error(fmt::format("CompressedAllReduce: expected {} gradients and aggregates, got {} and {}",
                            tensors_.size(), gradients.size(), aggregates.size()));
  }
  for (std::size_t t = 0; t < tensors_.size(); ++t) {
    const auto n = static_cast<std::size_t>(tensors_[t].numel());
    if (gradients[t].size() != n || aggregates[t].size() != n) {
      throw Error(fmt::format("CompressedAllReduce: tensor '{}' has {} elements, got a gradient of {} and "
                              "an output of {}", tensors_[t].name, n, gradients[t].size(), aggregates[t].size()));
    }
  }
  SyncReport report;
  const CommCounters before = comm_.totals();

  // Units of several tensors work on fused copies; a unit of one tensor uses its spans directly.
  std::vector<std::vector<float>> fused_in(units_.size()), fused_out(units_.size());
  auto input_of = [&](std::size_t u) -> std::span<const float> {
    const Unit& unit = units_[u];
    if (unit.tensors.size() == 1) return gradients[unit.tensors[0]];
    fused_in[u].clear();
    for (std::size_t t : unit.tensors) fused_in[u].insert(fused_in[u].end(), gradients[t].begin(), gradients[t].end());
    return fused_in[u];
  };
  auto output_of = [&](std::size_t u) -> std::span<float> {
    const Unit& unit = units_[u];
    if (unit.tensors.size() == 1) return aggregates[unit.tensors[0]];
    fused_out[u].assign(static_cast<std::size_t>(unit.numel), 0.0f);
    return fused_out[u];
  };

  std::vector<std::optional<Message>> messages(units_.size());
  auto check_message = [&](std::size_t u, int round, const Message& message) {
    const Aggregation aggregation = compressor_->aggregation();
    const bool allowed = aggregation == Aggregation::MultiRound ||
                         (round == 0 && (aggregation == Aggregation::Summable) ==
                                            (message.exchange == Exchange::Sum));
    if (!allowed) {
      throw Error(fmt::format("compressor declared {} aggregation but sent a {} message in round {} of unit '{}'",
                              to_string(aggregation),
                              message.exchange == Exchange::Sum ? "sum" : "gather", round, units_[u].name));
    }
    const auto expected = compressor_->wire_bytes(context(units_[u], step), round);
    if (expected && *expected != message.wire_bytes()) {
      throw Error(fmt::format("compressor declared {} payload bytes for unit '{}' round {} but sent {}", *expected,
                              units_[u].name, round, message.wire_bytes()));
    }
    report.payload_bytes += message.wire_bytes();
  };

  auto start = SteadyClock::now();
  for (std::size_t u = 0; u < units_.size(); ++u) {
    messages[u] = compressor_->encode(context(units_[u], step), input_of(u), scratch_[u]);
    check_message(u, 0, *messages[u]);
  }
  report.codec_s += seconds_since(start);

  std::vector<Received> received(units_.size());
  for (int round = 0;; ++round) {
    const bool any = std::ranges::any_of(messages, [](const auto& m) { return m.has_value(); });
    if (!any) break;
    exchange(messages, round, step, received);
    report.rounds = round + 1;
    start = SteadyClock::now();
    for (std::size_t u = 0; u < units_.size(); ++u) {
      if (!messages[u]) continue;
      const std::span<float> out = round == 0 || units_[u].tensors.size() == 1
                                       ? output_of(u)
                                       : std::span<float>(fused_out[u]);
      messages[u] = compressor_->decode(context(units_[u], step), round, received[u], scratch_[u], out);
      if (messages[u]) check_message(u, round + 1, *messages[u]);
    }
    report.codec_s += seconds_since(start);
  }

  for (std::size_t u = 0; u < units_.size(); ++u) {
    if (units_[u].tensors.size() == 1) continue;
    std::size_t offset = 0;
    for (std::size_t t : units_[u].tensors) {
      std::copy_n(fused_out[u].begin() + static_cast<std::ptrdiff_t>(offset), aggregates[t].size(), aggregates[t].begin());
      offset += aggregates[t].size();
    }
  }
  report.comm = comm_.totals() - before;
  return report;
}

void CompressedAllReduce::exchange(std::vector<std::optional<Message>>& messages, int round, std::uint64_t step,
                                   std::vector<Received>& received) {
  std::vector<float>& summed = summed_;
  std::vector<std::byte>& gathered = gathered_;
  const int world = comm_.size();
  for (Received& r : received) r = Received{};

  // Every Sum message of the round travelling as the same value type: one all-reduce of their
  // concatenation (fp32 first, then fp16, then bf16, each range its own collective).
  summed.clear();
  std::vector<std::pair<std::size_t, std::size_t>> sum_ranges(messages.size(), {0, 0});
  for (const kernels::ValueType wire : {kernels::ValueType::F32, kernels::ValueType::F16, kernels::ValueType::BF16}) {
    const std::size_t begin = summed.size();
    for (std::size_t u = 0; u < messages.size(); ++u) {
      if (!messages[u] || messages[u]->exchange != Exchange::Sum || messages[u]->wire != wire) continue;
      const std::span<const float> values = messages[u]->sum_values();
      sum_ranges[u] = {summed.size(), values.size()};
      summed.insert(summed.end(), values.begin(), values.end());
    }
    const std::span<float> range = std::span<float>(summed).subspan(begin);
    if (range.empty()) continue;
    if (wire == kernels::ValueType::F32) {
      comm_.all_reduce(range, ReduceOp::Sum);
    } else {
      summed_16bit_.resize(range.size());
      const std::span<std::uint16_t> bits(summed_16bit_);
      kernels::encode_values(range, wire, std::as_writable_bytes(bits));
      comm_.all_reduce_16bit(bits, wire);
      kernels::decode_values(std::as_bytes(bits), wire, range);
    }
  }
  for (std::size_t u = 0; u < messages.size(); ++u) {
    if (messages[u] && messages[u]->exchange == Exchange::Sum) {
      received[u].sum = std::span<const float>(summed).subspan(sum_ranges[u].first, sum_ranges[u].second);
    }
  }

  // Every GatherBytes message of the round: one all-gather. Fixed-size payloads (declared by the
  // compressor, identical on every rank) need no size table.
  std::vector<std::size_t> gathering;
  bool fixed_sizes = true;
  for (std::size_t u = 0; u < messages.size(); ++u) {
    if (!messages[u] || messages[u]->exchange != Exchange::GatherBytes) continue;
    gathering.push_back(u);
    fixed_sizes = fixed_sizes && compressor_->wire_bytes(context(units_[u], step), round).has_value();
  }
  if (gathering.empty()) return;
  std::vector<std::span<const std::byte>> payloads;
  std::vector<std::size_t> sizes;
  for (std::size_t u : gathering) {
    payloads.emplace_back(messages[u]->bytes);
    sizes.push_back(messages[u]->bytes.size());
  }
  const std::vector<std::byte> mine = compress_detail::frame_payloads(payloads, !fixed_sizes);

  std::vector<std::size_t> counts;
  if (fixed_sizes) {
    counts.assign(static_cast<std::size_t>(world), mine.size());
    gathered.resize(mine.size() * static_cast<std::size_t>(world));
    comm_.all_gather_v(std::span<const std::byte>(mine), std::span<const std::size_t>(counts),
                       std::span<std::byte>(gathered));
  } else {
    gathered = comm_.all_gather_v(std::span<const std::byte>(mine), &counts);
  }
  auto split = compress_detail::split_frames(gathered, counts, gathering.size(),
                                             fixed_sizes ? std::optional(std::span<const std::size_t>(sizes))
                                                         : std::nullopt);
  for (std::size_t g = 0; g < gathering.size(); ++g) received[gathering[g]].gathered = std::move(split[g]);
}

}  // namespace lowcomm
