#pragma once
// The mean of a set of gradients over all ranks, through a compressor: the piece a data-parallel
// strategy (and DiLoCo's outer step, and `lowcomm replay`) calls once per step. It cuts the
// tensors into units by the chosen granularity, runs the compressor's rounds, and fuses the
// messages of each round into one collective per exchange kind: every Sum message of a
// round is one all-reduce, every GatherBytes message one all-gather. run() does a whole step;
// start() and finish() split it so that the first round's exchange runs while the caller
// computes (DeMo's pipelined step).
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "lowcomm/comm/communicator.hpp"
#include "lowcomm/comm/participation.hpp"
#include "lowcomm/compress/compressor.hpp"
#include "lowcomm/compress/merge_schedule.hpp"

namespace lowcomm {

struct SyncReport {
  CommCounters comm;             // this rank's collectives of the step
  double codec_s = 0.0;          // time in encode and decode
  std::uint64_t payload_bytes = 0;  // what this rank contributed to the collectives
  int rounds = 0;
  // Whether the step's exchanges carried this rank's contribution: false on a step it dropped out
  // of (comm/participation.hpp); true on a step without exchanges.
  bool present = true;

  SyncReport& operator+=(const SyncReport& other);  // rounds: the larger; present: both
};

// Granularity::Bucket's units: consecutive tensors (in order) fused until the next would pass
// bucket_bytes of fp32; a tensor larger than that is a bucket of its own. Indices into `tensors`.
std::vector<std::vector<std::size_t>> bucket_partition(std::span<const TensorInfo> tensors, std::uint64_t bucket_bytes);

// One unit the compressor sees: a tensor, or consecutive tensors fused into a flat vector.
struct CompressionUnit {
  std::uint32_t id;
  std::string name;                  // the tensor's, "bucket<i>" or "global"
  std::vector<std::int64_t> shape;   // the tensor's shape; fused units are 1-D
  std::vector<std::size_t> tensors;  // indices into the tensor list, fused in this order
  std::int64_t numel;
};

// The units of `tensors` at a granularity (bucket_bytes: Granularity::Bucket's cap), as
// CompressedAllReduce cuts them and `lowcomm plan` prices them.
std::vector<CompressionUnit> compression_units(std::span<const TensorInfo> tensors, Granularity granularity,
                                               std::uint64_t bucket_bytes);

class CompressedAllReduce {
 public:
  // bucket_bytes is the fusion cap for Granularity::Bucket (a tensor larger than it is a bucket
  // of its own); `execution` reaches the compressor in every UnitContext. `participation` says
  // which ranks take part in each step (default: all): an absent rank's messages travel as zeros
  // (sums) or nothing (gathers, merges), and every rank's aggregate is the mean over the ranks
  // present. `merge_groups`, one group per rank, makes a merged exchange regional
  // (merge_schedule.hpp; empty: the butterfly). Throws ConfigError when the compressor does not
  // support the granularity, or for groups with a compressor that does not merge.
  CompressedAllReduce(Communicator& comm, std::unique_ptr<Compressor> compressor,
                      std::vector<TensorInfo> tensors, Granularity granularity,
                      std::uint64_t bucket_bytes, std::uint64_t shared_seed, ExecutionContext execution,
                      Participation participation = {}, std::vector<int> merge_groups = {});

  // gradients[i] and aggregates[i] belong to tensors[i]; aggregates receive the mean over ranks
  // as the compressor reconstructs it. Collective: every rank calls it with the same step.
  SyncReport run(std::uint64_t step, std::span<const std::span<const float>> gradients,
                 std::span<const std::span<float>> aggregates);

  // run() in two halves, each reporting its own share (their sum is run()'s report). start()
  // encodes and starts the first round's collectives without blocking (non-blocking MPI; a
  // variable-size all-gather first exchanges its sizes, blocking); the gradients must stay
  // untouched until finish(), which waits for the exchange, decodes into the aggregates and runs
  // any further rounds (PowerSGD's second) blocking. Between the two the rank may compute but
  // must not start another step of this object. Bytes are those of run() (counted in start()'s
  // share, as collectives count their bytes when they start);
  // with three or more ranks a Sum exchange may differ from run()'s in its last bits (MPI's
  // non-blocking all-reduce may add in another order).
  SyncReport start(std::uint64_t step, std::span<const std::span<const float>> gradients);
  SyncReport finish(std::span<const std::span<float>> aggregates);
  bool in_flight() const { return flight_ != nullptr; }

  ~CompressedAllReduce();  // waits for an exchange still in flight
  CompressedAllReduce(const CompressedAllReduce&) = delete;
  CompressedAllReduce& operator=(const CompressedAllReduce&) = delete;

  Compressor& compressor() { return *compressor_; }
  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  const std::vector<CompressionUnit>& units() const { return units_; }

 private:
  using Unit = CompressionUnit;
  struct Flight;    // one step between start and finish
  struct RoundExchange;  // one round's collectives, from begin_exchange to end_exchange
  UnitContext context(const Unit& unit, std::uint64_t step) const;
  void check_shapes(std::span<const std::span<const float>> gradients) const;
  void check_message(Flight& flight, std::size_t unit, int round, const Message& message) const;
  SyncReport begin(std::uint64_t step, std::span<const std::span<const float>> gradients, bool overlap);
  RoundExchange begin_exchange(const std::vector<std::optional<Message>>& messages, int round, std::uint64_t step,
                          bool overlap);
  void merge_exchange(RoundExchange& exchange, const std::vector<std::optional<Message>>& messages, int round,
                      std::uint64_t step);
  void end_exchange(RoundExchange& exchange, std::vector<Received>& received);

  Communicator& comm_;
  std::unique_ptr<Compressor> compressor_;
  std::vector<TensorInfo> tensors_;
  std::vector<Unit> units_;
  std::vector<UnitScratch> scratch_;  // one per unit, handed to each of its compressor calls
  // A round's exchange buffers, which the Received views point into; kept from run to run so
  // that no step pays for fresh pages. The price is memory held between steps: for dense
  // exchanges, up to the units' whole size (as the compressors' own scratch buffers hold theirs).
  std::vector<std::byte> gathered_;     // the all-gather result
  std::vector<float> summed_;           // the all-reduced values
  std::vector<std::uint16_t> summed_16bit_;  // fp16/bf16 sums on the wire
  std::uint64_t shared_seed_;
  ExecutionContext execution_;
  Participation participation_;
  std::vector<int> merge_groups_;          // the ranks' groups of a regional merge (empty: the butterfly)
  std::vector<MergeRound> merge_rounds_;  // a Merged compressor's tree (over the step's present ranks)
  std::vector<bool> present_;  // who takes part in the step in flight (or the last one); empty: all
  int participants_ = 0;       // how many of them (0: all)
  std::unique_ptr<Flight> flight_;  // set between start() and finish()
};

}  // namespace lowcomm
