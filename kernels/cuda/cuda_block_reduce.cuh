#pragma once
// Reductions over one thread block of kThreads, for the kernels that give each row of a matrix
// one block (layer norm, attention's softmax, cross-entropy): a fixed tree, so the same bits run to run. Included by
// kernels/cuda/*.cu only.
#include <cstdint>

#include "cuda_memory.cuh"

namespace lowcomm::kernels::cuda_backend {

constexpr int kWarpSize = 32;
constexpr int kWarps = kThreads / kWarpSize;
constexpr unsigned kWholeWarp = 0xFFFFFFFFu;
static_assert(kThreads % kWarpSize == 0, "the block reductions take whole warps");

// b > a ? b : a: a NaN never replaces a number, as the Reference's `if (x > max) max = x`.
struct Larger {
  __device__ float operator()(float a, float b) const { return b > a ? b : a; }
};
struct Sum {
  __device__ float operator()(float a, float b) const { return a + b; }
};

// `combine` of every thread's `partial` over a block of exactly kThreads threads (every launch of
// these kernels uses kThreads), returned to all of them: a fixed tree, so fixed bits; `identity`
// pads the tree's unused lanes. Every thread of the block must call it. Two barriers suffice
// between calls (each instantiation has its own shared variables): a call writes warp_results
// only after the previous call's barrier that follows its last read of them, and `total` only
// after its own first barrier, which every reader of the previous total has passed.
template <class Combine>
__device__ inline float block_reduce(float partial, float identity, Combine combine) {
  __shared__ float warp_results[kWarps];
  __shared__ float total;
  const int lane = static_cast<int>(threadIdx.x) % kWarpSize, warp = static_cast<int>(threadIdx.x) / kWarpSize;
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2) {
    partial = combine(partial, __shfl_down_sync(kWholeWarp, partial, offset));
  }
  if (lane == 0) warp_results[warp] = partial;
  __syncthreads();
  if (warp == 0) {
    float result = lane < kWarps ? warp_results[lane] : identity;
    for (int offset = kWarpSize / 2; offset > 0; offset /= 2) {
      result = combine(result, __shfl_down_sync(kWholeWarp, result, offset));
    }
    if (lane == 0) total = result;
  }
  __syncthreads();
  return total;
}

inline __device__ float block_sum(float partial) { return block_reduce(partial, 0.0f, Sum{}); }

// Blocks for one-block-per-row kernels: one per row, up to kMaxBlocks (the kernels grid-stride).
inline unsigned row_blocks(std::int64_t rows) { return static_cast<unsigned>(rows < kMaxBlocks ? rows : kMaxBlocks); }

}  // namespace lowcomm::kernels::cuda_backend
