#pragma once
// Every collective lowcomm runs goes through a Communicator. It wraps an MPI communicator (its
// own duplicate, so lowcomm's traffic never mixes with the caller's), has its transport (MPI, or
// NCCL on the GPU: transport.hpp) move the data, and records for this rank the bytes the
// modelled algorithm sends and receives, the measured time, and the time the network model
// charges, the same whichever transport moved them. The simulated clock adds measured
// compute to modelled communication, so a run on a fast cluster answers "how long would this
// take on 100 Mbps links?"; a collective started without blocking (start_*) runs on the clock
// while the rank computes, so overlap is credited (simulated_clock.hpp). Bookkeeping between the
// ranks (agreement, metrics gathered for the log, the clock's settlement) goes through control(),
// which is never counted. What it does itself: check each call, price it (the network model,
// cached), count it, and hand the data to the transport; the network mode's pacing
// (network_pacing.hpp) and the clock's events and settlement (clock_ledger.hpp) are their own.
#include <mpi.h>

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

#include "lowcomm/comm/clock_ledger.hpp"
#include "lowcomm/comm/collective.hpp"
#include "lowcomm/comm/control_channel.hpp"
#include "lowcomm/comm/mpi_types.hpp"
#include "lowcomm/comm/network_model.hpp"
#include "lowcomm/comm/network_pacing.hpp"
#include "lowcomm/comm/simulated_clock.hpp"
#include "lowcomm/comm/transport.hpp"
#include "lowcomm/error.hpp"
#include "lowcomm/kernels/float16.hpp"

namespace lowcomm {

// Running totals of a rank's collectives. Subtract two snapshots to get one step's share. A
// non-blocking collective counts its bytes and modelled time when it starts, its call and
// measured time (the time the rank was blocked in wait()) when it completes.
struct CommCounters {
  std::uint64_t calls = 0;
  std::uint64_t bytes_sent = 0;
  std::uint64_t bytes_received = 0;
  double measured_s = 0.0;  // wall time inside the calls, from the last rank's arrival in throttle mode
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
  // Stragglers on the simulated clock (network.mode = simulate): rank r's compute counts
  // compute_scales[r] times as long as measured (SimulatedClock::set_compute_scales). Empty:
  // every rank as measured; otherwise one entry per rank.
  std::vector<double> compute_scales;
  // What moves the data (comm.transport). Buffers given to the collectives must be memory it
  // can read: host or CUDA managed memory for MPI (ReduceOp::Average divides on the host), and
  // for NCCL also device memory, except for an average.
  Transport transport = Transport::Mpi;
};

class Communicator;
class CollectiveTransport;
class TransferInFlight;

// A non-blocking collective in flight, returned by Communicator::start_*. Its buffers must stay
// untouched until wait() returns. wait() is collective in the sense that every rank must wait for
// its collectives in the same order (the simulated clock checks it). Move-only; destroying one
// still in flight waits for it (errors swallowed). It must not outlive its Communicator.
class PendingCollective {
 public:
  PendingCollective() = default;
  PendingCollective(PendingCollective&& other) noexcept;
  PendingCollective& operator=(PendingCollective&& other) noexcept;
  PendingCollective(const PendingCollective&) = delete;
  PendingCollective& operator=(const PendingCollective&) = delete;
  ~PendingCollective();

  bool active() const { return comm_ != nullptr; }
  // Lets MPI progress the collective; true once it has completed (wait() then returns at once,
  // apart from throttle mode's hold). Not a clock event: call it as often as convenient.
  bool test();
  // Blocks until the collective has completed (in throttle mode, also until its modelled time
  // since the start has passed), then finishes it (ReduceOp::Average divides here).
  void wait();

 private:
  friend class Communicator;
  PendingCollective(Communicator* comm, std::uint64_t id) : comm_(comm), id_(id) {}
  Communicator* comm_ = nullptr;
  std::uint64_t id_ = 0;
};

class Communicator {
 public:
  // Collective over `comm`: every rank must construct its Communicator together. Throws
  // ConfigError for a transport this build lacks, lowcomm::Error where NCCL cannot start.
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

  // Point-to-point, every pair of a matching at once (gossip): rank r sends `mine` to
  // partners[r] and receives that rank's `mine` into `theirs`. `partners` has one entry per rank
  // and is the same on every rank: a matching (partners[partners[r]] = r, no rank its own
  // partner), -1 for a rank that sits the round out (its `theirs` is left as it is). Every rank
  // calls it together, with the same number of elements. The network model charges one round in
  // which all pairs' messages travel on their links (a pair link where network.links sets one,
  // else the two ranks' own), so it lasts as long as its slowest pair; only the pairs' bytes
  // are counted. Throws CommError for a partners list that is not a matching.
  template <Transferable T>
  void exchange_pairs(std::span<const int> partners, std::span<const T> mine, std::span<T> theirs);

  // Point-to-point in one direction (a merge tree's reduce and broadcast): rank r sends `mine` to
  // sends_to[r] (-1: sends nothing), and receives into `theirs` what the rank naming r sends (at
  // most one may; `theirs` is left as it is where none does). A pair naming each other swaps, as
  // exchange_pairs does. `sends_to` has one entry per rank and is the same on every rank; every
  // rank calls it together with the same number of elements. Priced as exchange_pairs: one round
  // in which every message travels on its link; a rank's payload is what it sends. Throws
  // CommError when a rank names itself or a rank outside the job, or two ranks name the same one.
  template <Transferable T>
  void send_pairs(std::span<const int> sends_to, std::span<const T> mine, std::span<T> theirs);

  // Rank r sends block j of `mine` (mine.size() / W elements each) to rank j, and receives rank
  // j's block r into block j of `theirs` (MPI_Alltoall); its own block r is copied. Every rank
  // calls it together with the same number of elements, a multiple of W. Priced as the pairwise
  // exchange: W - 1 rounds, in round d each rank sending one block to rank r + d (mod W) on their
  // link. Throws CommError for sizes that do not divide or differ between input and output.
  template <Transferable T>
  void all_to_all(std::span<const T> mine, std::span<T> theirs);

  void barrier();

  // Non-blocking versions of the collectives above, with the same arguments, results and byte
  // counts (counted at the start). MPI_Iallreduce may sum in another order than MPI_Allreduce,
  // so with three or more ranks a sum can differ in its last bits from the blocking call's.
  // In throttle mode the modelled time is counted from this rank's start (there is no barrier:
  // that would block), so ranks should start level; collectives in flight are served one after
  // another, as the simulated clock serves them. Open MPI makes progress on a collective only
  // inside MPI calls: call test() now and then, or the transfer happens in wait().
  template <Reducible T>
  PendingCollective start_all_reduce(std::span<T> data, ReduceOp op);
  PendingCollective start_all_reduce_16bit(std::span<std::uint16_t> data, kernels::ValueType format);
  template <Transferable T>
  PendingCollective start_all_gather(std::span<const T> mine, std::span<T> all);
  template <Transferable T>
  PendingCollective start_all_gather_v(std::span<const T> mine, std::span<const std::size_t> counts,
                                       std::span<T> all);
  template <Transferable T>
  PendingCollective start_broadcast(std::span<T> data, int root);

  // Lets every collective in flight progress (PendingCollective::test on each): Open MPI moves
  // them only inside MPI calls, so a rank that computes long should call this now and then
  // (`lowcomm bench progress`). Cheap when nothing is in flight; not a clock event.
  void progress();

  const CommCounters& totals() const { return totals_; }
  const CommCounters& totals(CollectiveKind kind) const { return by_kind_[static_cast<int>(kind)]; }
  std::span<const CollectiveRecord> records() const { return records_; }
  void clear_records() { records_.clear(); }

  // Seconds on the simulated clock (see NetworkMode), including this rank's compute since the
  // last collective. Exact, and identical on all ranks, right after synchronize_clock(); between
  // synchronisations it counts this rank's own compute where the slowest rank's belongs, and a
  // non-blocking collective as if it were hidden.
  double simulated_seconds() const;

  // Collective: settles the simulated clock by replaying every rank's collective calls since the
  // last settlement and its compute since its last call (SimulatedClock; one all-gather of the
  // ranks' call lists, so the clock costs no extra message per collective). Call it once per
  // training step, whether or not the step communicated: that step's compute moves the clock. It also runs by itself
  // after kMaxPendingCollectives calls (on all ranks at the same one) to bound memory.
  // Returns what the settlement found: this rank's exposed and hidden communication since the
  // previous one, and the settled clock (the same on every rank).
  ClockSettlement synchronize_clock();
  // Moves the simulated clock forward by `seconds` on this rank (call it on every rank alike): a
  // run resumed from a checkpoint continues the clock where the checkpoint left it.
  void advance_clock(double seconds) { ledger_.advance(seconds); }
  static constexpr std::size_t kMaxPendingCollectives = ClockLedger::kMaxPendingEvents;
  // This rank's communication time on the settled clock: exposed (the rank waited) and hidden
  // (overlapped with its compute). Subtract two snapshots around synchronize_clock() for a step.
  const OverlapTotals& overlap() const { return ledger_.overlap(); }

  const CommunicatorOptions& options() const { return options_; }

  // The uncounted channel over the same ranks, for everything that is not training traffic.
  const ControlChannel& control() const { return control_; }

 private:
  friend class PendingCollective;
  void all_reduce_elements(void* data, std::size_t count, SumType type);
  void all_gather_elements(const void* mine, std::size_t count, void* all, std::size_t element_bytes);
  void all_gather_v_elements(const void* mine, std::span<const std::size_t> counts, void* all,
                             std::size_t element_bytes);
  void broadcast_elements(void* data, std::size_t count, std::size_t element_bytes, int root);
  void check_matching(std::span<const int> partners) const;  // CommError unless exchange_pairs' rule holds
  void send_pairs_elements(std::span<const int> sends_to, const void* mine, void* theirs, std::size_t count,
                           std::size_t element_bytes);
  void all_to_all_elements(const void* mine, std::size_t count, void* theirs, std::size_t their_count,
                           std::size_t element_bytes);
  std::vector<std::size_t> exchange_counts(std::size_t mine);
  // CommError unless counts has one entry per rank, mine counts[rank] and all their sum.
  void check_gather_v(std::string_view who, std::size_t mine, std::span<const std::size_t> counts,
                      std::size_t all) const;

  PendingCollective start_all_reduce_elements(void* data, std::size_t count, SumType type,
                                              std::function<void()> finish);
  PendingCollective start_all_gather_v_elements(const void* mine, std::span<const std::size_t> counts, void* all,
                                                std::size_t element_bytes);
  PendingCollective start_broadcast_elements(void* data, std::size_t count, std::size_t element_bytes, int root);

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
  RankCost all_reduce_cost(std::size_t count, std::size_t element_bytes);
  RankCost all_gather_v_cost(std::span<const std::uint64_t> block_bytes);
  RankCost broadcast_cost(std::uint64_t bytes, int root);
  static std::vector<std::uint64_t> block_bytes(std::span<const std::size_t> counts, std::size_t element_bytes);

  // Called around every blocking transfer: paces, puts it on the clock, counts and records it.
  struct CallStart {
    double arrival;      // when this rank called the collective
    double all_arrived;  // when the last rank had (throttle waits for it); otherwise just after arrival
  };
  CallStart begin_call();
  void end_call(CollectiveKind kind, std::uint64_t payload_bytes, const RankCost& cost, CallStart start);
  void count_call(CollectiveKind kind, const CommCounters& call);
  void record_call(CollectiveKind kind, std::uint64_t payload_bytes, const RankCost& cost, double measured_s);
  // The call has returned: compute counts again, and a full ledger is settled.
  void returned();

  // Non-blocking collectives in flight, by number (the clock's collective numbers).
  struct InFlight {
    std::unique_ptr<TransferInFlight> transfer;
    CollectiveKind kind = CollectiveKind::AllReduce;
    std::uint64_t payload_bytes = 0;
    RankCost cost{};
    double started = 0.0;         // wall time at the start call
    NetworkPacing::Reservation links;  // throttle: when its modelled transfer ends (after the queue)
    std::function<void()> finish;  // after completion (the average's division)
  };
  // Starts a collective: `issue` starts the transport's transfer and returns it.
  template <class Issue>
  PendingCollective start_call(CollectiveKind kind, std::uint64_t payload_bytes, const RankCost& cost,
                               InFlight entry, Issue&& issue);
  bool test(std::uint64_t id);
  void wait(std::uint64_t id);

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
  CommunicatorOptions options_;
  CommCounters totals_;
  std::array<CommCounters, kCollectiveKinds> by_kind_{};
  std::vector<CollectiveRecord> records_;
  std::unique_ptr<CollectiveTransport> transport_;
  std::map<CostKey, RankCost> cost_cache_;
  std::uint64_t next_collective_ = 0;  // the clock's collective numbers
  std::map<std::uint64_t, InFlight> in_flight_;
  ControlChannel control_;
  NetworkPacing pacing_;
  ClockLedger ledger_;
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
  all_reduce_elements(data.data(), data.size(), sum_type<T>());
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
  check_gather_v("all_gather_v", mine.size(), counts, all.size());
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

template <Transferable T>
void Communicator::exchange_pairs(std::span<const int> partners, std::span<const T> mine, std::span<T> theirs) {
  if (theirs.size() != mine.size()) throw CommError("exchange_pairs: the output must hold as many elements as the input");
  check_matching(partners);
  send_pairs_elements(partners, mine.data(), theirs.data(), mine.size(), sizeof(T));
}

template <Transferable T>
void Communicator::send_pairs(std::span<const int> sends_to, std::span<const T> mine, std::span<T> theirs) {
  if (theirs.size() != mine.size()) throw CommError("send_pairs: the output must hold as many elements as the input");
  send_pairs_elements(sends_to, mine.data(), theirs.data(), mine.size(), sizeof(T));
}

template <Transferable T>
void Communicator::all_to_all(std::span<const T> mine, std::span<T> theirs) {
  all_to_all_elements(mine.data(), mine.size(), theirs.data(), theirs.size(), sizeof(T));
}

template <Reducible T>
PendingCollective Communicator::start_all_reduce(std::span<T> data, ReduceOp op) {
  std::function<void()> finish;
  if (op == ReduceOp::Average) {
    if constexpr (!std::is_floating_point_v<T>) {
      throw CommError("start_all_reduce with ReduceOp::Average needs a floating-point buffer; "
                      "use ReduceOp::Sum for integers and divide yourself");
    } else {
      finish = [data, ranks = static_cast<T>(size_)] {
        for (T& x : data) x /= ranks;
      };
    }
  }
  return start_all_reduce_elements(data.data(), data.size(), sum_type<T>(), std::move(finish));
}

template <Transferable T>
PendingCollective Communicator::start_all_gather(std::span<const T> mine, std::span<T> all) {
  if (all.size() != mine.size() * static_cast<std::size_t>(size_)) {
    throw CommError("start_all_gather: the output must hold world_size * input elements");
  }
  const std::vector<std::size_t> counts(static_cast<std::size_t>(size_), mine.size());
  return start_all_gather_v_elements(mine.data(), counts, all.data(), sizeof(T));
}

template <Transferable T>
PendingCollective Communicator::start_all_gather_v(std::span<const T> mine, std::span<const std::size_t> counts,
                                                   std::span<T> all) {
  check_gather_v("start_all_gather_v", mine.size(), counts, all.size());
  return start_all_gather_v_elements(mine.data(), counts, all.data(), sizeof(T));
}

template <Transferable T>
PendingCollective Communicator::start_broadcast(std::span<T> data, int root) {
  return start_broadcast_elements(data.data(), data.size(), sizeof(T), root);
}

}  // namespace lowcomm
