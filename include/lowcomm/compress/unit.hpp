#pragma once
// What a compressor is told about the piece of gradient it compresses. The unit is a tensor, a
// bucket of tensors fused into one flat vector, or the whole model, depending on the granularity
// (compressor.hpp); a compressor keeps its state keyed by the unit's id, which is stable from
// step to step and identical on every rank.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lowcomm/kernels/execution_context.hpp"
#include "lowcomm/core/tensor.hpp"

namespace lowcomm {

struct UnitContext {
  std::uint64_t step = 0;
  std::uint32_t unit_id = 0;             // stable across steps and ranks
  std::string_view name;                 // the tensor's name, "bucket<i>" or "global"
  std::span<const std::int64_t> shape;   // the tensor's shape; buckets and global are 1-D
  int rank = 0;
  int world_size = 1;
  // Peers that drop out (comm/participation.hpp): the ranks whose messages this step's exchange
  // carries (0: all world_size of them), and whether this rank is one. An absent rank still
  // encodes and decodes (it receives the result), but the library sends nothing of its messages:
  // `received` holds only the present ranks' payloads and sums, and the mean is over them.
  int participants = 0;
  bool present = true;
  std::uint64_t shared_seed = 0;         // the run's seed, the same on every rank
  ExecutionContext execution;            // where the compressor's kernels compute
  std::int64_t numel() const;
  int contributors() const { return participants > 0 ? participants : world_size; }  // the mean's divisor
};

// State kept per unit is saved under "<prefix><unit id>" (PowerSGD's "q/3"); this reads the id
// back from such a key of a checkpoint, which may be damaged or foreign: throws lowcomm::Error
// naming the key unless what follows the prefix is a decimal unit id and nothing else.
std::uint32_t unit_id_of_state_key(std::string_view key, std::string_view prefix);

}  // namespace lowcomm
