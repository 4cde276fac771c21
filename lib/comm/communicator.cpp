#include "lowcomm/comm/communicator.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "collective_transport.hpp"
#include "lowcomm/core/timeline.hpp"

namespace lowcomm {

namespace {

SumType sum_type_16bit(kernels::ValueType format) {
  if (format == kernels::ValueType::F32) throw CommError("all_reduce_16bit: fp32 is not a 16-bit format");
  return format == kernels::ValueType::F16 ? SumType::F16 : SumType::BF16;
}

}  // namespace

CommCounters& CommCounters::operator+=(const CommCounters& other) {
  calls += other.calls;
  bytes_sent += other.bytes_sent;
  bytes_received += other.bytes_received;
  measured_s += other.measured_s;
  modelled_s += other.modelled_s;
  return *this;
}

CommCounters operator-(CommCounters a, const CommCounters& b) {
  a.calls -= b.calls;
  a.bytes_sent -= b.bytes_sent;
  a.bytes_received -= b.bytes_received;
  a.measured_s -= b.measured_s;
  a.modelled_s -= b.modelled_s;
  return a;
}

Communicator::Communicator(MPI_Comm comm, CommunicatorOptions options)
    : options_(std::move(options)),
      control_(comm),
      pacing_(options_.mode, control_),
      ledger_(pacing_.clock_rule(), options_.mode == NetworkMode::Off || control_.size() == 1, control_,
              wall_seconds()) {
  check_mpi(MPI_Comm_size(comm, &size_), "MPI_Comm_size");
  if (options_.all_gather_algorithm == AllGatherAlgorithm::RecursiveDoubling && !is_power_of_two(size_)) {
    throw ConfigError(fmt::format(
        "the recursive_doubling all-gather needs a power-of-two number of ranks, this job has {}; "
        "choose ring or bruck", size_));
  }
  if (!options_.compute_scales.empty() && options_.compute_scales.size() != static_cast<std::size_t>(size_)) {
    throw ConfigError(fmt::format("{} compute scales for a job of {} ranks: give one per rank, or none",
                                  options_.compute_scales.size(), size_));
  }
  check_mpi(MPI_Comm_dup(comm, &comm_), "MPI_Comm_dup");
  // Errors come back as CommError with MPI's message instead of aborting the job.
  check_mpi(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  check_mpi(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
  try {
    transport_ = make_transport(options_.transport, comm_);
  } catch (...) {
    MPI_Comm_free(&comm_);
    throw;
  }
  ledger_.set_compute_scales(options_.compute_scales);
  ledger_.returned(wall_seconds());
}

Communicator::~Communicator() {
  // A collective still in flight must complete before its transport, communicator and buffers
  // go (destroying a transfer waits for it).
  in_flight_.clear();
  transport_.reset();
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

double Communicator::simulated_seconds() const { return ledger_.simulated_seconds(wall_seconds()); }

ClockSettlement Communicator::synchronize_clock() {
  const ClockSettlement settled = ledger_.settle(wall_seconds());
  ledger_.returned(wall_seconds());  // the settlement is bookkeeping, not compute
  return settled;
}

Communicator::RankCost Communicator::rank_cost(const CollectiveCost& cost) const {
  const auto r = static_cast<std::size_t>(rank_);
  return {cost.seconds, cost.bytes_sent[r], cost.bytes_received[r]};
}

template <class Compute>
Communicator::RankCost Communicator::cached_cost(const CostKey& key, Compute&& compute) {
  if (const auto hit = cost_cache_.find(key); hit != cost_cache_.end()) return hit->second;
  const RankCost cost = rank_cost(compute());
  if (cost_cache_.size() >= kCostCacheEntries) cost_cache_.clear();
  cost_cache_.emplace(key, cost);
  return cost;
}

Communicator::RankCost Communicator::all_reduce_cost(std::size_t count, std::size_t element_bytes) {
  return cached_cost({CollectiveKind::AllReduce, count, element_bytes}, [&] {
    return options_.network.all_reduce(options_.all_reduce_algorithm, size_, count, element_bytes);
  });
}

Communicator::RankCost Communicator::all_gather_v_cost(std::span<const std::uint64_t> block_bytes) {
  // Variable sizes change from call to call: not cached.
  return rank_cost(options_.network.all_gather(options_.all_gather_algorithm,
                                               std::vector<std::uint64_t>(block_bytes.begin(), block_bytes.end())));
}

Communicator::RankCost Communicator::broadcast_cost(std::uint64_t bytes, int root) {
  if (root < 0 || root >= size_) {
    throw CommError(fmt::format("broadcast root {} is not a rank (this communicator has {})", root, size_));
  }
  return cached_cost({CollectiveKind::Broadcast, bytes, static_cast<std::uint64_t>(root)},
                     [&] { return options_.network.broadcast(size_, root, bytes); });
}

std::vector<std::uint64_t> Communicator::block_bytes(std::span<const std::size_t> counts, std::size_t element_bytes) {
  std::vector<std::uint64_t> bytes(counts.size());
  for (std::size_t w = 0; w < counts.size(); ++w) bytes[w] = counts[w] * element_bytes;
  return bytes;
}

Communicator::CallStart Communicator::begin_call() {
  const double arrival = wall_seconds();
  return {arrival, pacing_.all_arrived()};
}

void Communicator::count_call(CollectiveKind kind, const CommCounters& call) {
  totals_ += call;
  by_kind_[static_cast<int>(kind)] += call;
}

void Communicator::record_call(CollectiveKind kind, std::uint64_t payload_bytes, const RankCost& cost,
                               double measured_s) {
  if (!options_.keep_records) return;
  records_.push_back(
      {kind, payload_bytes, cost.bytes_sent, cost.bytes_received, measured_s, pacing_.charged(cost.seconds)});
}

void Communicator::end_call(CollectiveKind kind, std::uint64_t payload_bytes, const RankCost& cost,
                            CallStart start) {
  const double modelled_s = pacing_.charged(cost.seconds);
  const double end = pacing_.after_blocking(start.all_arrived, modelled_s, wall_seconds());
  const double measured_s = end - start.all_arrived;

  // Throttle: the real time is the communication time (at least the modelled one).
  ledger_.record(ClockEventKind::Blocking, next_collective_++, kind, start.arrival,
                 pacing_.clock_seconds(modelled_s, measured_s));
  if (Timeline& timeline = Timeline::global(); timeline.enabled()) {
    timeline.record("network", to_string(kind), timeline.since_start(start.arrival), timeline.since_start(end));
  }
  count_call(kind, {1, cost.bytes_sent, cost.bytes_received, measured_s, modelled_s});
  record_call(kind, payload_bytes, cost, measured_s);
  returned();
}

void Communicator::returned() {
  ledger_.returned(wall_seconds());
  if (ledger_.full()) synchronize_clock();
}

// ---- non-blocking collectives ----------------------------------------------------------------

template <class Issue>
PendingCollective Communicator::start_call(CollectiveKind kind, std::uint64_t payload_bytes, const RankCost& cost,
                                           InFlight entry, Issue&& issue) {
  const double arrival = wall_seconds();
  const double modelled_s = pacing_.charged(cost.seconds);
  const std::uint64_t id = next_collective_++;
  entry.kind = kind;
  entry.payload_bytes = payload_bytes;
  entry.cost = cost;
  entry.started = arrival;
  entry.links = pacing_.reserve(arrival, cost.seconds);
  InFlight& call = in_flight_.emplace(id, std::move(entry)).first->second;
  try {
    call.transfer = issue();
  } catch (...) {
    pacing_.cancel(call.links);
    in_flight_.erase(id);
    next_collective_ = id;
    throw;
  }
  // The bytes are counted now; the measured time when it is waited for. The call itself is
  // counted as compute (it only posts the collective).
  ledger_.record(ClockEventKind::Start, id, kind, arrival, modelled_s);
  ledger_.returned(arrival);
  count_call(kind, {0, cost.bytes_sent, cost.bytes_received, 0.0, modelled_s});
  return PendingCollective(this, id);
}

void Communicator::progress() {
  for (const auto& [id, call] : in_flight_) call.transfer->test();
}

bool Communicator::test(std::uint64_t id) { return in_flight_.at(id).transfer->test(); }

void Communicator::wait(std::uint64_t id) {
  const auto found = in_flight_.find(id);
  if (found == in_flight_.end()) throw CommError(fmt::format("wait: collective {} is not in flight", id));
  InFlight call = std::move(found->second);
  in_flight_.erase(found);
  const double entry = wall_seconds();
  call.transfer->wait();
  pacing_.hold_until(call.links.release);
  const double exit = wall_seconds();
  const double blocked = exit - entry;
  if (call.finish) call.finish();
  ledger_.record(ClockEventKind::Wait, id, call.kind, entry, blocked);
  if (Timeline& timeline = Timeline::global(); timeline.enabled()) {
    timeline.record("network (in flight)", to_string(call.kind), timeline.since_start(call.started),
                    timeline.since_start(exit));
    timeline.record("network", "wait " + std::string(to_string(call.kind)), timeline.since_start(entry),
                    timeline.since_start(exit));
  }
  // The call counts once it has completed; its bytes and modelled time were counted at the start.
  count_call(call.kind, {1, 0, 0, blocked, 0.0});
  record_call(call.kind, call.payload_bytes, call.cost, blocked);
  returned();
}

PendingCollective Communicator::start_all_reduce_elements(void* data, std::size_t count, SumType type,
                                                          std::function<void()> finish) {
  const std::size_t bytes = element_bytes(type);
  const RankCost cost = all_reduce_cost(count, bytes);
  InFlight entry;
  entry.finish = std::move(finish);
  return start_call(CollectiveKind::AllReduce, count * bytes, cost, std::move(entry),
                    [&] { return transport_->start_all_reduce_sum(data, count, type); });
}

PendingCollective Communicator::start_all_reduce_16bit(std::span<std::uint16_t> data, kernels::ValueType format) {
  return start_all_reduce_elements(data.data(), data.size(), sum_type_16bit(format), {});
}

PendingCollective Communicator::start_all_gather_v_elements(const void* mine, std::span<const std::size_t> counts,
                                                            void* all, std::size_t element_bytes) {
  const std::vector<std::uint64_t> blocks = block_bytes(counts, element_bytes);
  const RankCost cost = all_gather_v_cost(blocks);
  return start_call(CollectiveKind::AllGather, blocks[static_cast<std::size_t>(rank_)], cost, InFlight{},
                    [&] { return transport_->start_all_gather_v(mine, counts, element_bytes, all); });
}

PendingCollective Communicator::start_broadcast_elements(void* data, std::size_t count, std::size_t element_bytes,
                                                         int root) {
  const RankCost cost = broadcast_cost(count * element_bytes, root);
  return start_call(CollectiveKind::Broadcast, count * element_bytes, cost, InFlight{},
                    [&] { return transport_->start_broadcast(data, count, element_bytes, root); });
}

PendingCollective::PendingCollective(PendingCollective&& other) noexcept
    : comm_(std::exchange(other.comm_, nullptr)), id_(other.id_) {}

PendingCollective& PendingCollective::operator=(PendingCollective&& other) noexcept {
  if (this != &other) {
    if (comm_ != nullptr) {
      try {
        comm_->wait(id_);
      } catch (...) {  // NOLINT(bugprone-empty-catch): a move cannot report it
      }
    }
    comm_ = std::exchange(other.comm_, nullptr);
    id_ = other.id_;
  }
  return *this;
}

PendingCollective::~PendingCollective() {
  if (comm_ == nullptr) return;
  try {
    comm_->wait(id_);
  } catch (...) {  // NOLINT(bugprone-empty-catch): a destructor cannot report it
  }
}

bool PendingCollective::test() {
  if (comm_ == nullptr) return true;
  return comm_->test(id_);
}

void PendingCollective::wait() {
  if (comm_ == nullptr) return;
  Communicator* comm = std::exchange(comm_, nullptr);
  comm->wait(id_);
}

void Communicator::all_reduce_elements(void* data, std::size_t count, SumType type) {
  const CallStart start = begin_call();  // the model's own cost is not the caller's compute
  const std::size_t bytes = element_bytes(type);
  const RankCost cost = all_reduce_cost(count, bytes);
  transport_->all_reduce_sum(data, count, type);
  end_call(CollectiveKind::AllReduce, count * bytes, cost, start);
}

void Communicator::all_reduce_16bit(std::span<std::uint16_t> data, kernels::ValueType format) {
  all_reduce_elements(data.data(), data.size(), sum_type_16bit(format));
}

void Communicator::all_gather_elements(const void* mine, std::size_t count, void* all,
                                       std::size_t element_bytes) {
  const CallStart start = begin_call();
  const RankCost cost = cached_cost({CollectiveKind::AllGather, count * element_bytes, 0}, [&] {
    const std::vector<std::uint64_t> blocks(static_cast<std::size_t>(size_), count * element_bytes);
    return options_.network.all_gather(options_.all_gather_algorithm, blocks);
  });
  transport_->all_gather(mine, count, element_bytes, all);
  end_call(CollectiveKind::AllGather, count * element_bytes, cost, start);
}

void Communicator::all_gather_v_elements(const void* mine, std::span<const std::size_t> counts,
                                         void* all, std::size_t element_bytes) {
  const std::vector<std::uint64_t> blocks = block_bytes(counts, element_bytes);
  const CallStart start = begin_call();
  const RankCost cost = all_gather_v_cost(blocks);
  transport_->all_gather_v(mine, counts, element_bytes, all);
  end_call(CollectiveKind::AllGather, blocks[static_cast<std::size_t>(rank_)], cost, start);
}

void Communicator::check_gather_v(std::string_view who, std::size_t mine, std::span<const std::size_t> counts,
                                  std::size_t all) const {
  if (counts.size() != static_cast<std::size_t>(size_)) {
    throw CommError(fmt::format("{}: counts must hold one entry per rank", who));
  }
  std::size_t total = 0;
  for (std::size_t c : counts) total += c;
  if (mine != counts[static_cast<std::size_t>(rank_)] || all != total) {
    throw CommError(fmt::format("{}: the input must hold counts[rank] elements and the output the sum of counts", who));
  }
}

std::vector<std::size_t> Communicator::exchange_counts(std::size_t mine) {
  const auto mine64 = static_cast<std::uint64_t>(mine);
  std::vector<std::uint64_t> counts64(static_cast<std::size_t>(size_));
  all_gather(std::span<const std::uint64_t>(&mine64, 1), std::span<std::uint64_t>(counts64));
  return {counts64.begin(), counts64.end()};
}

void Communicator::broadcast_elements(void* data, std::size_t count, std::size_t element_bytes, int root) {
  const RankCost cost = broadcast_cost(count * element_bytes, root);
  const CallStart start = begin_call();
  transport_->broadcast(data, count, element_bytes, root);
  end_call(CollectiveKind::Broadcast, count * element_bytes, cost, start);
}

void Communicator::check_matching(std::span<const int> partners) const {
  if (partners.size() != static_cast<std::size_t>(size_)) {
    throw CommError(fmt::format("exchange_pairs: partners holds {} entries for {} ranks", partners.size(), size_));
  }
  for (int r = 0; r < size_; ++r) {
    const int p = partners[static_cast<std::size_t>(r)];
    if (p < -1 || p >= size_ || p == r || (p >= 0 && partners[static_cast<std::size_t>(p)] != r)) {
      throw CommError(fmt::format("exchange_pairs: partners is not a matching: rank {} names {} (each rank names "
                                  "its partner, which names it back, or -1)",
                                  r, p));
    }
  }
}

void Communicator::send_pairs_elements(std::span<const int> sends_to, const void* mine, void* theirs,
                                       std::size_t count, std::size_t element_bytes) {
  if (sends_to.size() != static_cast<std::size_t>(size_)) {
    throw CommError(fmt::format("send_pairs: sends_to holds {} entries for {} ranks", sends_to.size(), size_));
  }
  std::vector<int> sender_of(static_cast<std::size_t>(size_), -1);
  for (int r = 0; r < size_; ++r) {
    const int to = sends_to[static_cast<std::size_t>(r)];
    if (to < -1 || to >= size_ || to == r) {
      throw CommError(fmt::format("send_pairs: rank {} sends to {} (a rank of the {} other than itself, or -1)", r,
                                  to, size_));
    }
    if (to < 0) continue;
    int& sender = sender_of[static_cast<std::size_t>(to)];
    if (sender >= 0) {
      throw CommError(fmt::format("send_pairs: ranks {} and {} both send to rank {} (one message per rank and call)",
                                  sender, r, to));
    }
    sender = r;
  }
  const int receives_from = sender_of[static_cast<std::size_t>(rank_)];
  const int sends = sends_to[static_cast<std::size_t>(rank_)];
  // Pairings change from round to round: not cached (one round, linear in the ranks).
  const std::vector<std::uint64_t> bytes(static_cast<std::size_t>(size_), count * element_bytes);
  const RankCost cost = rank_cost(options_.network.pair_exchange(sends_to, bytes));
  const CallStart start = begin_call();
  transport_->send_receive(sends, mine, receives_from, theirs, count, element_bytes);
  end_call(CollectiveKind::PairExchange, sends >= 0 ? count * element_bytes : 0, cost, start);
}

void Communicator::all_to_all_elements(const void* mine, std::size_t count, void* theirs, std::size_t their_count,
                                       std::size_t element_bytes) {
  if (their_count != count || count % static_cast<std::size_t>(size_) != 0) {
    throw CommError(fmt::format("all_to_all: {} elements in and {} out on {} ranks: both must be the same multiple "
                                "of the number of ranks",
                                count, their_count, size_));
  }
  const std::size_t block_count = count / static_cast<std::size_t>(size_);
  const std::uint64_t block_bytes = block_count * element_bytes;
  const RankCost cost = cached_cost({CollectiveKind::AllToAll, block_bytes, 0},
                                    [&] { return options_.network.all_to_all(size_, block_bytes); });
  const CallStart start = begin_call();
  transport_->all_to_all(mine, block_count, element_bytes, theirs);
  // The payload: what this rank hands to the others (its own block stays).
  end_call(CollectiveKind::AllToAll, block_bytes * static_cast<std::uint64_t>(size_ - 1), cost, start);
}

void Communicator::barrier() {
  const CallStart start = begin_call();
  const RankCost cost =
      cached_cost({CollectiveKind::Barrier, 0, 0}, [&] { return options_.network.barrier(size_); });
  check_mpi(MPI_Barrier(comm_), "MPI_Barrier");
  end_call(CollectiveKind::Barrier, 0, cost, start);
}

}  // namespace lowcomm
