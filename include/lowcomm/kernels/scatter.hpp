#pragma once
// Scattering sparse (index, value) pairs back into a dense buffer: the decode side of top-k
// sparsification (REFERENCE.md §2, duplicates accumulate) and of DeMo (§1 scatter_mean).
// Pairs are applied in the order given, so the float sums are the same on every backend and run
// (the reference's GPU scatter_reduce is not; ours must be).
// Every index is checked against out.size() before anything is written: on error, out is as
// it was.
#include <cstdint>
#include <span>

#include "lowcomm/kernels/backend_name.hpp"

namespace lowcomm::kernels {

// out[indices[p]] += values[p] for p = 0, 1, ... in that order.
// Throws lowcomm::Error if the two input spans differ in size or an index is outside
// [0, out.size()) (the message names the first such index, its position and the size).
void scatter_add(Backend backend, std::span<const std::int64_t> indices,
                 std::span<const float> values, std::span<float> out);

// out is overwritten: each slot holds the mean of the values that selected it, that is their
// float sum in order divided by float(count); slots nobody selected are 0.
// Same errors as scatter_add, and one for more than 2^32-1 pairs (the counts are 32-bit).
void scatter_mean(Backend backend, std::span<const std::int64_t> indices,
                  std::span<const float> values, std::span<float> out);

// scatter_mean for pairs grouped by block, as DeMo's payloads are: `sources` lists (one per
// rank), each of blocks · k pairs in which pairs [b·k, (b+1)·k) fall in block b and carry an
// index within it (0 .. block_size-1). out (blocks · block_size floats) is overwritten exactly as
// scatter_mean over all the lists concatenated, with each index made absolute (b · block_size +
// index), would overwrite it: per slot, the values summed in list order and divided by their
// count. Cpu works block by block, in parallel, with counts of one block at a time.
// Throws lowcomm::Error if block_size or k is below 1, out's size is not a multiple of
// block_size, a list's two spans do not both hold blocks · k entries, or an index is outside
// [0, block_size) (naming the list, the position and the index). On error, out is as it was.
struct BlockPairs {
  std::span<const std::int64_t> indices;
  std::span<const float> values;
};
void scatter_mean_per_block(Backend backend, std::int64_t block_size, std::int64_t k,
                            std::span<const BlockPairs> sources, std::span<float> out);

// Random-k's pair of loops. gather: out[p] = source[indices[p]]. scatter_divided: out is
// overwritten with zeros, then out[indices[p]] = values[p] / divisor for p = 0, 1, ... in that
// order (a later pair at the same slot replaces an earlier one). The division is a true float
// division, so divisor 1 copies the values bit for bit.
// Same errors as scatter_add (indices checked against source.size() and out.size()).
void gather(Backend backend, std::span<const std::int64_t> indices, std::span<const float> source,
            std::span<float> out);
void scatter_divided(Backend backend, std::span<const std::int64_t> indices, std::span<const float> values,
                     float divisor, std::span<float> out);

}  // namespace lowcomm::kernels
