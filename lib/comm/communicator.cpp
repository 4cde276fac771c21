#include "lowcomm/comm/communicator.hpp"

#include <fmt/format.h>

#include <chrono>
#include <climits>
#include <thread>

#include "lowcomm/core/simd_clones.hpp"

namespace lowcomm {

namespace {

// MPI counts and displacements are ints; larger buffers must be split by the caller.
int mpi_count(std::size_t count, std::string_view what) {
  if (count > static_cast<std::size_t>(INT_MAX)) {
    throw CommError(fmt::format("{}: {} elements exceed MPI's limit of {} per call; split the buffer",
                                what, count, INT_MAX));
  }
  return static_cast<int>(count);
}

// MPI user reductions over 16-bit floats: each element is widened to float, added, and rounded
// back, so every partial sum is rounded to the wire type (commutative; the order is MPI's).
// (Two functions rather than a template, so that each gets SIMD clones.)
LOWCOMM_SIMD_CLONES
void sum_f16(void* in, void* inout, int* length, MPI_Datatype*) {
  const auto* a = static_cast<const std::uint16_t*>(in);
  auto* b = static_cast<std::uint16_t*>(inout);
  for (int i = 0; i < *length; ++i) b[i] = kernels::float_to_f16(kernels::f16_to_float(a[i]) + kernels::f16_to_float(b[i]));
}

LOWCOMM_SIMD_CLONES
void sum_bf16(void* in, void* inout, int* length, MPI_Datatype*) {
  const auto* a = static_cast<const std::uint16_t*>(in);
  auto* b = static_cast<std::uint16_t*>(inout);
  for (int i = 0; i < *length; ++i) {
    b[i] = kernels::float_to_bf16(kernels::bf16_to_float(a[i]) + kernels::bf16_to_float(b[i]));
  }
}

}  // namespace

std::string_view to_string(NetworkMode mode) {
  switch (mode) {
    case NetworkMode::Off: return "off";
    case NetworkMode::Simulate: return "simulate";
    case NetworkMode::Throttle: return "throttle";
  }
  return "?";
}

NetworkMode parse_network_mode(std::string_view name) {
  for (auto m : {NetworkMode::Off, NetworkMode::Simulate, NetworkMode::Throttle}) {
    if (to_string(m) == name) return m;
  }
  throw ConfigError(fmt::format("unknown network mode '{}': use off, simulate or throttle", name));
}

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
    : options_(std::move(options)), control_(comm) {
  check_mpi(MPI_Comm_size(comm, &size_), "MPI_Comm_size");
  if (options_.all_gather_algorithm == AllGatherAlgorithm::RecursiveDoubling && !is_power_of_two(size_)) {
    throw ConfigError(fmt::format(
        "the recursive_doubling all-gather needs a power-of-two number of ranks, this job has {}; "
        "choose ring or bruck", size_));
  }
  check_mpi(MPI_Comm_dup(comm, &comm_), "MPI_Comm_dup");
  // Errors come back as CommError with MPI's message instead of aborting the job.
  check_mpi(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  check_mpi(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
  last_exit_ = now();
}

Communicator::~Communicator() {
  for (MPI_Op* op : {&sum_f16_, &sum_bf16_}) {
    if (*op != MPI_OP_NULL) MPI_Op_free(op);
  }
  for (auto& [bytes, type] : element_types_) MPI_Type_free(&type);
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

double Communicator::now() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double Communicator::simulated_seconds() const {
  double clock = settled_clock_s_ + pending_comm_s_ + (now() - last_exit_);
  for (double compute : pending_compute_s_) clock += compute;
  return clock;
}

void Communicator::synchronize_clock() {
  // The collective k ends when its last rank arrives plus its communication time, so the clock
  // advances by the slowest rank's compute before each collective (ranks are level after each).
  // The communication time goes along as the last entry: in Throttle mode it is measured, and
  // the slowest rank's keeps every rank's clock identical.
  std::vector<double> local = pending_compute_s_;
  local.push_back(pending_comm_s_);
  std::vector<double> slowest(local.size());
  if (options_.mode != NetworkMode::Off && size_ > 1) {
    check_mpi(MPI_Allreduce(local.data(), slowest.data(), mpi_count(local.size(), "clock"), MPI_DOUBLE,
                        MPI_MAX, comm_),
          "MPI_Allreduce (simulated clock)");
  } else {
    slowest = local;  // Off: the clock is this rank's wall clock
  }
  for (double seconds : slowest) settled_clock_s_ += seconds;
  pending_compute_s_.clear();
  pending_comm_s_ = 0.0;
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

Communicator::CallStart Communicator::begin_call() {
  const double arrival = now();
  if (options_.mode == NetworkMode::Throttle) {
    // A collective cannot finish before its last rank has arrived: wait for it, so the modelled
    // time is counted from there on every rank (without this, an early rank would overlap its
    // wait for a late one with the modelled transfer and leave too soon).
    check_mpi(MPI_Barrier(comm_), "MPI_Barrier (throttle)");
  }
  return {arrival, now()};
}

void Communicator::end_call(CollectiveKind kind, std::uint64_t payload_bytes, const RankCost& cost,
                            CallStart start) {
  double end = now();
  const bool modelled = options_.mode != NetworkMode::Off;
  const double modelled_s = modelled ? cost.seconds : 0.0;
  if (options_.mode == NetworkMode::Throttle && end - start.all_arrived < modelled_s) {
    std::this_thread::sleep_for(std::chrono::duration<double>(start.all_arrived + modelled_s - end));
    end = now();
  }
  const double measured_s = end - start.all_arrived;

  // Throttle: the real time is the communication time (at least the modelled one).
  pending_compute_s_.push_back(start.arrival - last_exit_);
  pending_comm_s_ += options_.mode == NetworkMode::Simulate ? modelled_s : measured_s;

  const CommCounters call{1, cost.bytes_sent, cost.bytes_received, measured_s, modelled_s};
  totals_ += call;
  by_kind_[static_cast<int>(kind)] += call;
  if (options_.keep_records) {
    records_.push_back({kind, payload_bytes, call.bytes_sent, call.bytes_received, measured_s, modelled_s});
  }
  last_exit_ = now();
  if (pending_compute_s_.size() >= kMaxPendingCollectives) {
    synchronize_clock();
    last_exit_ = now();  // the synchronisation is bookkeeping, not compute
  }
}

MPI_Datatype Communicator::element_type(std::size_t element_bytes) {
  for (const auto& [bytes, type] : element_types_) {
    if (bytes == element_bytes) return type;
  }
  MPI_Datatype type = MPI_DATATYPE_NULL;
  check_mpi(MPI_Type_contiguous(mpi_count(element_bytes, "element size"), MPI_BYTE, &type), "MPI_Type_contiguous");
  check_mpi(MPI_Type_commit(&type), "MPI_Type_commit");
  element_types_.emplace_back(element_bytes, type);
  return type;
}

void Communicator::all_reduce_elements(void* data, std::size_t count, MPI_Datatype type,
                                       std::size_t element_bytes) {
  const int n = mpi_count(count, "all_reduce");
  const CallStart start = begin_call();  // the model's own cost is not the caller's compute
  const RankCost cost = cached_cost({CollectiveKind::AllReduce, count, element_bytes}, [&] {
    return options_.network.all_reduce(options_.all_reduce_algorithm, size_, count, element_bytes);
  });
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, data, n, type, MPI_SUM, comm_), "MPI_Allreduce");
  end_call(CollectiveKind::AllReduce, count * element_bytes, cost, start);
}

void Communicator::all_reduce_16bit(std::span<std::uint16_t> data, kernels::ValueType format) {
  if (format == kernels::ValueType::F32) throw CommError("all_reduce_16bit: fp32 is not a 16-bit format");
  MPI_Op& op = format == kernels::ValueType::F16 ? sum_f16_ : sum_bf16_;
  if (op == MPI_OP_NULL) {
    MPI_User_function* function = format == kernels::ValueType::F16 ? &sum_f16 : &sum_bf16;
    check_mpi(MPI_Op_create(function, 1, &op), "MPI_Op_create");
  }
  const int n = mpi_count(data.size(), "all_reduce_16bit");
  const CallStart start = begin_call();
  const RankCost cost = cached_cost({CollectiveKind::AllReduce, data.size(), 2}, [&] {
    return options_.network.all_reduce(options_.all_reduce_algorithm, size_, data.size(), 2);
  });
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, data.data(), n, MPI_UINT16_T, op, comm_), "MPI_Allreduce (16-bit)");
  end_call(CollectiveKind::AllReduce, data.size() * 2, cost, start);
}

void Communicator::all_gather_elements(const void* mine, std::size_t count, void* all,
                                       std::size_t element_bytes) {
  const int n = mpi_count(count, "all_gather");
  const MPI_Datatype type = element_type(element_bytes);
  const CallStart start = begin_call();
  const RankCost cost = cached_cost({CollectiveKind::AllGather, count * element_bytes, 0}, [&] {
    const std::vector<std::uint64_t> blocks(static_cast<std::size_t>(size_), count * element_bytes);
    return options_.network.all_gather(options_.all_gather_algorithm, blocks);
  });
  check_mpi(MPI_Allgather(mine, n, type, all, n, type, comm_), "MPI_Allgather");
  end_call(CollectiveKind::AllGather, count * element_bytes, cost, start);
}

void Communicator::all_gather_v_elements(const void* mine, std::span<const std::size_t> counts,
                                         void* all, std::size_t element_bytes) {
  const MPI_Datatype type = element_type(element_bytes);
  std::vector<int> mpi_counts(counts.size()), displacements(counts.size());
  std::vector<std::uint64_t> blocks(counts.size());
  std::size_t offset = 0;
  for (std::size_t w = 0; w < counts.size(); ++w) {
    mpi_counts[w] = mpi_count(counts[w], "all_gather_v");
    displacements[w] = mpi_count(offset, "all_gather_v (total)");
    blocks[w] = counts[w] * element_bytes;
    offset += counts[w];
  }
  // Variable sizes change from call to call: not cached.
  const CallStart start = begin_call();
  const RankCost cost = rank_cost(options_.network.all_gather(options_.all_gather_algorithm, blocks));
  check_mpi(MPI_Allgatherv(mine, mpi_counts[static_cast<std::size_t>(rank_)], type, all, mpi_counts.data(),
                       displacements.data(), type, comm_),
        "MPI_Allgatherv");
  end_call(CollectiveKind::AllGather, blocks[static_cast<std::size_t>(rank_)], cost, start);
}

std::vector<std::size_t> Communicator::exchange_counts(std::size_t mine) {
  const auto mine64 = static_cast<std::uint64_t>(mine);
  std::vector<std::uint64_t> counts64(static_cast<std::size_t>(size_));
  all_gather(std::span<const std::uint64_t>(&mine64, 1), std::span<std::uint64_t>(counts64));
  return {counts64.begin(), counts64.end()};
}

void Communicator::broadcast_elements(void* data, std::size_t count, std::size_t element_bytes, int root) {
  if (root < 0 || root >= size_) {
    throw CommError(fmt::format("broadcast root {} is not a rank (this communicator has {})", root, size_));
  }
  const int n = mpi_count(count, "broadcast");
  const MPI_Datatype type = element_type(element_bytes);
  const std::uint64_t bytes = count * element_bytes;
  const CallStart start = begin_call();
  const RankCost cost = cached_cost({CollectiveKind::Broadcast, bytes, static_cast<std::uint64_t>(root)},
                                    [&] { return options_.network.broadcast(size_, root, bytes); });
  check_mpi(MPI_Bcast(data, n, type, root, comm_), "MPI_Bcast");
  end_call(CollectiveKind::Broadcast, count * element_bytes, cost, start);
}

void Communicator::barrier() {
  const CallStart start = begin_call();
  const RankCost cost =
      cached_cost({CollectiveKind::Barrier, 0, 0}, [&] { return options_.network.barrier(size_); });
  check_mpi(MPI_Barrier(comm_), "MPI_Barrier");
  end_call(CollectiveKind::Barrier, 0, cost, start);
}

}  // namespace lowcomm
