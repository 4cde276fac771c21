#pragma once
// dct_topk.hpp's kernels as the two kernels they fuse, one after the other on the same backend:
// the backends without a fused version (Reference, Kokkos, CUDA) define theirs with these. The
// intermediate coefficients live in the backend's scratch memory (backend_scratch.hpp), so on an
// accelerator they stay where its kernels use them. The public kernels called here check their
// arguments again; the dispatch (dispatch/dct_topk.cpp) has already checked them.
#include <cstdint>
#include <span>

#include "backend_scratch.hpp"
#include "lowcomm/kernels/backend.hpp"
#include "lowcomm/kernels/blocks.hpp"
#include "lowcomm/kernels/dct.hpp"
#include "lowcomm/kernels/scatter.hpp"
#include "lowcomm/kernels/topk.hpp"

namespace lowcomm::kernels::detail {

// kept: already clamped to [1, h·w].
inline void composed_dct_topk_per_block(Backend backend, const BlockLayout& layout, std::span<const float> tensor,
                                        std::int64_t kept, std::span<std::int64_t> indices,
                                        std::span<float> selected) {
  const std::span<float> coefficients = backend_scratch(backend, tensor.size());
  ::lowcomm::kernels::dct_encode_blocks(backend, layout, tensor, coefficients);
  ::lowcomm::kernels::topk_per_block(backend, coefficients, layout.block_size(), kept, indices, selected);
}

inline void composed_scatter_mean_dct_decode(Backend backend, const BlockLayout& layout, std::int64_t k,
                                             std::span<const BlockPairs> sources, std::span<float> tensor) {
  const std::span<float> coefficients = backend_scratch(backend, tensor.size());
  ::lowcomm::kernels::scatter_mean_per_block(backend, layout.block_size(), k, sources, coefficients);
  ::lowcomm::kernels::dct_decode_blocks(backend, layout, coefficients, tensor);
}

}  // namespace lowcomm::kernels::detail
