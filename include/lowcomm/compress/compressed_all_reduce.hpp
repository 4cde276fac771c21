#pragma once
// The mean of a set of gradients over all ranks, through a compressor: the piece a data-parallel
// strategy (and DiLoCo's outer step, and `lowcomm replay`) calls once per step. It cuts the
// tensors into units by the chosen granularity, runs the compressor's rounds, and fuses the
// messages of each round into one collective per exchange kind: every Sum message of a
// round is one all-reduce, every GatherBytes message one all-gather.
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "lowcomm/comm/communicator.hpp"
#include "lowcomm/compress/compressor.hpp"

namespace lowcomm {

struct SyncReport {
  CommCounters comm;             // this rank's collectives of the step
  double codec_s = 0.0;          // time in encode and decode
  std::uint64_t payload_bytes = 0;  // what this rank contributed to the collectives
  int rounds = 0;
};

class CompressedAllReduce {
 public:
  // bucket_bytes is the fusion cap for Granularity::Bucket (a tensor larger than it is a bucket
  // of its own); `execution` reaches the compressor in every UnitContext. Throws ConfigError when
  // the compressor does not support the granularity.
  CompressedAllReduce(Communicator& comm, std::unique_ptr<Compressor> compressor,
                      std::vector<TensorInfo> tensors, Granularity granularity,
                      std::uint64_t bucket_bytes, std::uint64_t shared_seed, ExecutionContext execution);

  // gradients[i] and aggregates[i] belong to tensors[i]; aggregates receive the mean over ranks
  // as the compressor reconstructs it. Collective: every rank calls it with the same step.
  SyncReport run(std::uint64_t step, std::span<const std::span<const float>> gradients,
                 std::span<const std::span<float>> aggregates);

  Compressor& compressor() { return *compressor_; }
  const std::vector<TensorInfo>& tensors() const { return tensors_; }

 private:
  struct Unit {
    std::uint32_t id;
    std::string name;
    std::vector<std::int64_t> shape;
    std::vector<std::size_t> tensors;  // indices into tensors_, fused in this order
    std::int64_t numel;
  };
  UnitContext context(const Unit& unit, std::uint64_t step) const;
  void exchange(std::vector<std::optional<Message>>& messages, int round, std::uint64_t step,
                std::vector<Received>& received);

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
};

}  // namespace lowcomm
