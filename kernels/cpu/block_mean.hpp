#pragma once
// scatter_mean_per_block (scatter.hpp) one block at a time, for kernels that consume the means
// block by block (dct_topk.cpp), with the same bits. (The arguments are checked by the dispatch:
// ../dispatch/scatter_checks.hpp.)
#include <cstdint>
#include <span>

#include "lowcomm/kernels/scatter.hpp"

namespace lowcomm::kernels::cpu_backend {

// Block b's means into slots[0, block_size), every slot written. count: block_size zeros on
// entry, zeros again on return (one per thread, reused).
void mean_of_block(std::int64_t b, std::int64_t block_size, std::int64_t k, std::span<const BlockPairs> sources,
                   float* slots, std::uint32_t* count);

}  // namespace lowcomm::kernels::cpu_backend
