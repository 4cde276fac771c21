#pragma once
// Every collective lowcomm runs goes through a Communicator. It wraps an MPI communicator (its
// own duplicate, so lowcomm's traffic never mixes with the caller's), runs the collective on
// host buffers, and records for this rank the bytes the modelled algorithm sends and receives,
// the measured time, and the time the network model charges. The simulated clock adds measured
// compute to modelled communication, so a run on a fast cluster answers "how long would this
// take on 100 Mbps links?". Bookkeeping between the ranks (agreement, metrics gathered for the
// log) goes through control(), which is never counted.
#include <mpi.h>

#include <array>
#include <cstdint>
#include <map>
#include <span>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

#include "lowcomm/comm/collective.hpp"
#include "lowcomm/comm/control_channel.hpp"
#include "lowcomm/comm/mpi_types.hpp"
#include "lowcomm/comm/network_model.hpp"
#include "lowcomm/error.hpp"
#include "lowcomm/kernels/float16.hpp"

namespace lowcomm {

enum class NetworkMode : std::uint8_t {
  Off,       // no modelled time; the simulated clock is the wall clock
  Simulate,  // simulated clock = measured compute + modelled communication; nothing sleeps
  Throttle,  // each collective really takes its modelled time, counted from the last rank's
             // arrival (for overlap studies); the simulated clock is then the wall clock
};
std::string_view to_string(NetworkMode mode);
NetworkMode parse_network_mode(std::string_view name);  // "off", "simulate", "throttle"

// Running totals of a rank's collectives. Subtract two snapshots to get one step's share.
struct CommCounters {
  std::uint64_t calls = 0;
  std::uint64_t bytes_sent = 0;
  std::uint64_t bytes_received = 0;
  double measured_s = 0.0;
  double modelled_s = 0.0;

  CommCounters& operator+=(const CommCounters& other);
  friend CommCounters operator-(CommCounters a, const CommCounters& b);
};

// One collective as this rank saw it (kept only when CommunicatorOptions::keep_records is set).
struct CollectiveRecord {
  CollectiveKind kind;
  std::uint64_t payload_bytes;  // this rank's input: the buffer reduced, its block gathered, ...
  std::uint64_t bytes_sent;
  std::uint64_t bytes_received;
  double measured_s;
  double modelled_s;
};

struct CommunicatorOptions {
  NetworkModel network;
  NetworkMode mode = NetworkMode::Off;
  AllReduceAlgorithm all_reduce_algorithm = AllReduceAlgorithm::Ring;
  AllGatherAlgorithm all_gather_algorithm = AllGatherAlgorithm::Ring;
  bool keep_records = false;
};

class Communicator {
 public:
  // Collective over `comm`: every rank must construct its Communicator together.
  explicit Communicator(MPI_Comm comm, CommunicatorOptions options = {});
  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }

  // In place. Average divides the sum by the number of ranks (floating-point types only).
  template <Reducible T>
  void all_reduce(std::span<T> data, ReduceOp op);

  // In place, on fp16 or bf16 values stored as their 16 bits (kernels/float16.hpp): a sum in
  // half precision, as GPUs all-reduce half-precision gradients, at half the bytes of fp32.
  void all_reduce_16bit(std::span<std::uint16_t> data, kernels::ValueType format);

  // Every rank contributes mine.size() elements (the same on all ranks); `all` receives W blocks
  // in rank order and must hold W * mine.size() elements.
  template <Transferable T>
  void all_gather(std::span<const T> mine, std::span<T> all);

  // Variable sizes known to every rank (counts[w] elements from rank w); `all` holds their sum.
  template <Transferable T>
  void all_gather_v(std::span<const T> mine, std::span<const std::size_t> counts, std::span<T> all);

  // Variable sizes not known in advance: the counts are exchanged first, as a recorded
  // all-gather of one 8-byte count per rank, then the data. Returns the concatenation.
  template <Transferable T>
  std::vector<T> all_gather_v(std::span<const T> mine, std::vector<std::size_t>* counts_out = nullptr);

  template <Transferable T>
  void broadcast(std::span<T> data, int root);

  void barrier();

  const CommCounters& totals() const { return totals_; }
  const CommCounters& totals(CollectiveKind kind) const { return by_kind_[static_cast<int>(kind)]; }
  std::span<const CollectiveRecord> records() const { return records_; }
  void clear_records() { records_.clear(); }

  // Seconds on the simulated clock (see NetworkMode), including this rank's compute since the
  // last collective. Exact, and identical on all ranks, right after synchronize_clock(); between
  // synchronisations it counts this rank's own compute where the slowest rank's belongs.
  double simulated_seconds() const;

  // Collective: settles the simulated clock by taking, for every collective since the last call,
  // the slowest rank's compute before it (one all-reduce for all of them, so the clock costs no
  // extra message per collective). Call it once per training step. It also runs by itself every
  // kMaxPendingCollectives collectives (on all ranks at the same one) to bound memory.
  void synchronize_clock();
  // Moves the simulated clock forward by `seconds` on this rank (call it on every rank alike): a
  // run resumed from a checkpoint continues the clock where the checkpoint left it.
  void advance_clock(double seconds) { settled_clock_s_ += seconds; }
  static constexpr std::size_t kMaxPendingCollectives = 4096;

  const CommunicatorOptions& options() const { return options_; }

  // The uncounted channel over the same ranks, for everything that is not training traffic.
  const ControlChannel& control() const { return control_; }

 private:
  void all_reduce_elements(void* data, std::size_t count, MPI_Datatype type, std::size_t element_bytes);
  void all_gather_elements(const void* mine, std::size_t count, void* all, std::size_t element_bytes);
  void all_gather_v_elements(const void* mine, std::span<const std::size_t> counts, void* all,
                             std::size_t element_bytes);
  void broadcast_elements(void* data, std::size_t count, std::size_t element_bytes, int root);
  std::vector<std::size_t> exchange_counts(std::size_t mine);

  MPI_Datatype element_type(std::size_t element_bytes);  // contiguous bytes, cached per size
  double now() const;

  // What the model charges this rank for one call. Training repeats the same collectives every
  // step, so costs are cached by (kind, size, root): a hit costs a map lookup instead of walking
  // the algorithm's rounds.
  struct RankCost {
    double seconds;
    std::uint64_t bytes_sent;
    std::uint64_t bytes_received;
  };
  using CostKey = std::tuple<CollectiveKind, std::uint64_t, std::uint64_t>;
  static constexpr std::size_t kCostCacheEntries = 1024;
  template <class Compute>
  RankCost cached_cost(const CostKey& key, Compute&& compute);
  RankCost rank_cost(const CollectiveCost& cost) const;

  // Called around every MPI call: throttles, advances the clock, records.
  struct CallStart {
    double arrival;      // when this rank called the collective
    double all_arrived;  // Throttle: when the last rank had arrived; otherwise = arrival
  };
  CallStart begin_call();
  void end_call(CollectiveKind kind, std::uint64_t payload_bytes, const RankCost& cost, CallStart start);

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
  CommunicatorOptions options_;
  CommCounters totals_;
  std::array<CommCounters, kCollectiveKinds> by_kind_{};
  std::vector<CollectiveRecord> records_;
  std::vector<std::pair<std::size_t, MPI_Datatype>> element_types_;
  std::map<CostKey, RankCost> cost_cache_;
  MPI_Op sum_f16_ = MPI_OP_NULL;   // user-defined sums of 16-bit floats, made on first use
  MPI_Op sum_bf16_ = MPI_OP_NULL;
  // The simulated clock: settled_clock_s_ as of the last synchronize_clock(), plus for each
  // collective since then this rank's compute before it and its modelled (or, in Off mode,
  // measured) time.
  double settled_clock_s_ = 0.0;
  std::vector<double> pending_compute_s_;
  double pending_comm_s_ = 0.0;
  double last_exit_ = 0.0;  // wall time when the previous collective returned
  ControlChannel control_;
};

// ---- template definitions --------------------------------------------------------------------

template <Reducible T>
void Communicator::all_reduce(std::span<T> data, ReduceOp op) {
  if constexpr (!std::is_floating_point_v<T>) {
    if (op == ReduceOp::Average) {
      throw CommError("all_reduce with ReduceOp::Average needs a floating-point buffer; "
                      "use ReduceOp::Sum for integers and divide yourself");
    }
  }
  all_reduce_elements(data.data(), data.size(), mpi_datatype<T>(), sizeof(T));
  if (op == ReduceOp::Average) {
    const T ranks = static_cast<T>(size_);
    for (T& x : data) x /= ranks;
  }
}

template <Transferable T>
void Communicator::all_gather(std::span<const T> mine, std::span<T> all) {
  if (all.size() != mine.size() * static_cast<std::size_t>(size_)) {
    throw CommError("all_gather: the output must hold world_size * input elements");
  }
  all_gather_elements(mine.data(), mine.size(), all.data(), sizeof(T));
}

template <Transferable T>
void Communicator::all_gather_v(std::span<const T> mine, std::span<const std::size_t> counts,
                                std::span<T> all) {
  if (counts.size() != static_cast<std::size_t>(size_)) {
    throw CommError("all_gather_v: counts must hold one entry per rank");
  }
  std::size_t total = 0;
  for (std::size_t c : counts) total += c;
  if (mine.size() != counts[static_cast<std::size_t>(rank_)] || all.size() != total) {
    throw CommError("all_gather_v: the input must hold counts[rank] elements and the output "
                    "the sum of counts");
  }
  all_gather_v_elements(mine.data(), counts, all.data(), sizeof(T));
}

template <Transferable T>
std::vector<T> Communicator::all_gather_v(std::span<const T> mine, std::vector<std::size_t>* counts_out) {
  std::vector<std::size_t> counts = exchange_counts(mine.size());
  std::size_t total = 0;
  for (std::size_t c : counts) total += c;
  std::vector<T> all(total);
  all_gather_v(mine, std::span<const std::size_t>(counts), std::span<T>(all));
  if (counts_out != nullptr) *counts_out = std::move(counts);
  return all;
}

template <Transferable T>
void Communicator::broadcast(std::span<T> data, int root) {
  broadcast_elements(data.data(), data.size(), sizeof(T), root);
}

}  // namespace lowcomm
