#pragma once
// Every collective lowcomm runs goes through a Communicator. It wraps an MPI communicator (its
// own duplicate, so lowcomm's traffic never mixes with the caller's), has its transport (MPI, or
// NCCL on the GPU: transport.hpp) move the data, and records for this rank the bytes the
// modelled algorithm sends and receives, the measured time, and the time the network model
// charges, the same whichever transport moved them. Each call is put on the run's simulated clock
// (run_clock.hpp), which adds compute to modelled communication, so a run on a fast cluster
// answers "how long would this take on 100 Mbps links?"; a collective started without blocking
// (start_*) runs on the clock while the rank computes, so overlap is credited. Bookkeeping between
// the ranks (agreement, metrics gathered for the log, the clock's settlement) goes through
// control(), which is never counted. What it does itself: check each call, price it (the network
// model, cached), count it, and hand the data to the transport; the network mode's pacing
// (network_pacing.hpp) and the clock are their own.
#include <mpi.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <type_traits>
#include <vector>

#include "lowcomm/comm/collective.hpp"
#include "lowcomm/comm/collective_pricing.hpp"
#include "lowcomm/comm/comm_counters.hpp"
#include "lowcomm/comm/control_channel.hpp"
#include "lowcomm/comm/mpi_types.hpp"
#include "lowcomm/comm/network_model.hpp"
#include "lowcomm/comm/network_pacing.hpp"
#include "lowcomm/comm/pending_collective.hpp"
#include "lowcomm/comm/run_clock.hpp"
#include "lowcomm/comm/transport.hpp"
#include "lowcomm/error.hpp"
#include "lowcomm/kernels/float16.hpp"

namespace lowcomm {

struct CommunicatorOptions {
  NetworkModel network;
  NetworkMode mode = NetworkMode::Off;
  AllReduceAlgorithm all_reduce_algorithm = AllReduceAlgorithm::Ring;
  AllGatherAlgorithm all_gather_algorithm = AllGatherAlgorithm::Ring;
  bool keep_records = false;
  // What moves the data (comm.transport). Buffers given to the collectives must be memory it
  // can read: host or CUDA managed memory for MPI (ReduceOp::Average divides on the host), and
  // for NCCL also device memory, except for an average.
  Transport transport = Transport::Mpi;
};

class CollectiveTransport;
class MeteredCalls;

class Communicator {
 public:
  // Collective over `comm`: every rank must construct its Communicator together. Its calls go on
  // `clock`, the run's (over the same ranks, made for options.mode; it must outlive the
  // Communicator); without one, on a clock of its own with the compute measured. Throws
  // ConfigError for a transport this build lacks, lowcomm::Error where NCCL cannot start.
  explicit Communicator(MPI_Comm comm, CommunicatorOptions options = {}, RunClock* clock = nullptr);
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

  // What this rank's calls cost so far (comm_counters.hpp).
  const CommCounters& totals() const;
  const CommCounters& totals(CollectiveKind kind) const;
  std::span<const CollectiveRecord> records() const;
  void clear_records();

  // The simulated clock its calls go on: the run's, or its own.
  RunClock& clock() const { return *clock_; }

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
  void send_pairs_elements(std::span<const int> sends_to, const void* mine, void* theirs, std::size_t count,
                           std::size_t element_bytes);
  void all_to_all_elements(const void* mine, std::size_t count, void* theirs, std::size_t their_count,
                           std::size_t element_bytes);
  std::vector<std::size_t> exchange_counts(std::size_t mine);
  void check_gather_v(std::string_view who, std::size_t mine, std::span<const std::size_t> counts,
                      std::size_t all) const;  // CommError unless counts fit (collective_checks.hpp)
  void check_matching(std::span<const int> partners) const;

  PendingCollective start_all_reduce_elements(void* data, std::size_t count, SumType type,
                                              std::function<void()> finish);
  PendingCollective start_all_gather_v_elements(const void* mine, std::span<const std::size_t> counts, void* all,
                                                std::size_t element_bytes);
  PendingCollective start_broadcast_elements(void* data, std::size_t count, std::size_t element_bytes, int root);

  bool test(std::uint64_t id);
  void wait(std::uint64_t id);

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
  CommunicatorOptions options_;
  ControlChannel control_;
  std::unique_ptr<RunClock> own_clock_;  // when the run gave none
  RunClock* clock_ = nullptr;
  std::optional<CollectivePricing> pricing_;  // the network model's prices for this rank
  std::unique_ptr<MeteredCalls> calls_;       // pacing, clock, counters around each transfer
  std::unique_ptr<CollectiveTransport> transport_;
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
