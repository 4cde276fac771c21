#pragma once
// The Cpu block DCT (dct.cpp) one chunk of consecutive blocks at a time, for kernels that work on
// the coefficients block by block (dct_topk.hpp): the coefficients of a chunk are handed over
// while they are in cache, and no tensor-sized coefficient array is written. The transforms are
// exactly dct_encode_blocks' and dct_decode_blocks' (Backend::Cpu), so the bits are the same.
// The callbacks run on the OpenMP threads, several at once on different chunks (or once, over
// all blocks, for a tensor small enough for the per-block loops): they must touch only their own
// blocks' outputs and keep per-thread state of their own.
#include <cstdint>
#include <functional>
#include <span>

#include "lowcomm/kernels/blocks.hpp"

namespace lowcomm::kernels::cpu_backend {

// coefficients: blocks · h·w floats, block after block, of blocks [first_block, first_block + blocks).
using ChunkConsumer = std::function<void(std::int64_t first_block, std::int64_t blocks, const float* coefficients)>;
using ChunkProducer = std::function<void(std::int64_t first_block, std::int64_t blocks, float* coefficients)>;

// Encodes the tensor and hands each chunk's coefficients to `consume`. The layout and the span are
// the caller's to check.
void dct_encode_chunks(const BlockLayout& layout, std::span<const float> tensor, const ChunkConsumer& consume);

// Has `produce` write each chunk's coefficients (every one of them), then decodes them into the
// tensor.
void dct_decode_chunks(const BlockLayout& layout, const ChunkProducer& produce, std::span<float> tensor);

}  // namespace lowcomm::kernels::cpu_backend
