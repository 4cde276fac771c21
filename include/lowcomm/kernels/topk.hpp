#pragma once
// Top-k selection by magnitude (REFERENCE.md §1 per block for DeMo, §2 global for top-k
// sparsification). The order is fully defined so that every backend, thread count and run
// selects the same entries in the same order:
//   - larger |value| first; NaN (either sign) counts as larger than any number, +inf included;
//   - equal magnitudes (+x and -x, +0 and -0, two NaNs) go lower index first.
// `selected` receives the original values (sign kept), `indices` where they were.
#include <cstdint>
#include <span>

#include "lowcomm/kernels/backend_name.hpp"

namespace lowcomm::kernels {

// values: consecutive blocks of block_size floats. Per block, the k' = clamp(k, 1, block_size)
// entries that come first in the order above, in that order. indices are within the block
// (0 .. block_size-1); block b's results are at [b·k', (b+1)·k') of both outputs.
// Throws lowcomm::Error if block_size < 1, values.size() is not a multiple of it, or an output
// span does not have exactly blocks·k' elements.
void topk_per_block(Backend backend, std::span<const float> values, std::int64_t block_size,
                    std::int64_t k, std::span<std::int64_t> indices, std::span<float> selected);

// The same over the whole span: k' = clamp(k, 1, n) entries, indices into values.
// Throws lowcomm::Error if values is empty or an output span does not have exactly k' elements.
void topk_global(Backend backend, std::span<const float> values, std::int64_t k,
                 std::span<std::int64_t> indices, std::span<float> selected);

// Error feedback's correction formed in top-k's first pass over the span (lib/compress/builtin/
// topk.cpp, fused_correction.hpp):
//   corrected ← decay·residual + gradient      (elementwise.hpp's scale_add, bit for bit)
//   topk_global(corrected, k, indices, selected)
// The Cpu backend forms each element where its selection first reads it, so the span is crossed
// three times (two reads, one write) where the sequence crosses it four. `corrected` may be
// `residual` itself or apart from both inputs. Reference and Cpu only: elsewhere
// `implements(backend, "corrected_topk_global")` is false and the call throws (top-k then runs
// the sequence). Throws lowcomm::Error as topk_global does, and if the three spans' sizes differ.
void corrected_topk_global(Backend backend, float decay, std::span<const float> residual,
                           std::span<const float> gradient, std::span<float> corrected, std::int64_t k,
                           std::span<std::int64_t> indices, std::span<float> selected);

}  // namespace lowcomm::kernels
