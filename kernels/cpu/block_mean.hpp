#pragma once
// scatter_mean_per_block (scatter.hpp) one block at a time, for kernels that consume the means
// block by block (dct_topk.cpp), with the same checks and bits.
#include <cstdint>
#include <span>
#include <string_view>

#include "lowcomm/kernels/scatter.hpp"

namespace lowcomm::kernels::detail {

// scatter_mean_per_block's argument checks for an output of `slots` floats; errors name `kernel`.
void check_block_pairs(std::string_view kernel, std::int64_t block_size, std::int64_t k,
                       std::span<const BlockPairs> sources, std::int64_t slots);

// Block b's means into slots[0, block_size), every slot written. count: block_size zeros on
// entry, zeros again on return (one per thread, reused).
void mean_of_block(std::int64_t b, std::int64_t block_size, std::int64_t k, std::span<const BlockPairs> sources,
                   float* slots, std::uint32_t* count);

}  // namespace lowcomm::kernels::detail
