#pragma once
// DeMo's transport (REFERENCE.md §1) as two fused kernels over blocks: the per-block top-k of the
// block DCT, and the inverse DCT of the per-block scatter-mean. Each gives exactly the result of
// the two kernels it fuses run one after the other on the same backend; the Cpu backend hands
// each chunk of blocks from one step to the next while it is in cache, so no tensor-sized array
// of coefficients is written and read back in between.
#include <cstdint>
#include <span>

#include "lowcomm/kernels/backend_name.hpp"
#include "lowcomm/kernels/blocks.hpp"
#include "lowcomm/kernels/scatter.hpp"

namespace lowcomm::kernels {

// topk_per_block(dct_encode_blocks(tensor), h·w, k): per block, the k' = clamp(k, 1, h·w)
// coefficients of largest magnitude in topk.hpp's order, with their indices within the block;
// block b's at [b·k', (b+1)·k') of both outputs. Throws lowcomm::Error for an invalid layout, a
// tensor span of the wrong size, or outputs that do not hold exactly blocks·k' entries.
void dct_topk_per_block(Backend backend, const BlockLayout& layout, std::span<const float> tensor, std::int64_t k,
                        std::span<std::int64_t> indices, std::span<float> selected);

// dct_decode_blocks(scatter_mean_per_block(sources)): the tensor (layout.size() floats) is
// overwritten with the inverse DCT of the per-block means. Same errors as scatter_mean_per_block
// (for an output of layout.size() floats in blocks of h·w) and for an invalid layout or a tensor
// of the wrong size; on error the tensor is as it was.
void scatter_mean_dct_decode(Backend backend, const BlockLayout& layout, std::int64_t k,
                             std::span<const BlockPairs> sources, std::span<float> tensor);

}  // namespace lowcomm::kernels
