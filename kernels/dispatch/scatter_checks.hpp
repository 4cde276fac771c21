#pragma once
// scatter_mean_per_block's argument checks (scatter.cpp), for the dispatch of the kernels that
// take the same per-block lists (dct_topk.cpp's scatter_mean_dct_decode).
#include <cstdint>
#include <span>
#include <string_view>

#include "lowcomm/kernels/scatter.hpp"

namespace lowcomm::kernels::detail {

// scatter_mean_per_block's argument checks for an output of `slots` floats (the indices checked
// by `backend`, where they live); errors name `kernel`.
void check_block_pairs(Backend backend, std::string_view kernel, std::int64_t block_size, std::int64_t k,
                       std::span<const BlockPairs> sources, std::int64_t slots);

}  // namespace lowcomm::kernels::detail
