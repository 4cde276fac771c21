#pragma once
// Top-k of one block at a time, in topk.hpp's order and with topk_per_block's result for that
// block, for kernels that select inside blocks they compute themselves (dct_topk.cpp). A
// BlockSelector holds one thread's reusable buffers: one per thread.
#include <cstdint>
#include <memory>
#include <span>

namespace lowcomm::kernels::cpu_backend {

class BlockSelector {
 public:
  BlockSelector();
  ~BlockSelector();
  BlockSelector(const BlockSelector&) = delete;
  BlockSelector& operator=(const BlockSelector&) = delete;

  // The first k entries of `block` (1 <= k <= block.size()) in selection order: indices within
  // the block, and their values.
  void select(std::span<const float> block, std::int64_t k, std::int64_t* indices, float* selected);

 private:
  struct Buffers;
  std::unique_ptr<Buffers> buffers_;
};

}  // namespace lowcomm::kernels::cpu_backend
