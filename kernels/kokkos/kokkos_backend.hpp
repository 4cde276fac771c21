#pragma once
// The Kokkos versions of the compressors' kernels (Backend::Kokkos), written once for any
// Kokkos execution space: Serial, OpenMP or Threads on CPUs, CUDA, HIP or SYCL on GPUs. The
// dispatch functions in kernels/cpu/ call them after checking the arguments, so they assume
// valid sizes; the checks that depend on the data (a NaN to pack, a malformed payload) are made
// here, in parallel, and reported back as the first offending position for the dispatch to name
// in the same words as the other backends.
//
// Each mirrors the Reference kernel's arithmetic (same sums in the same order) wherever that
// order is part of the definition, so selections, packings and scatters are bitwise the
// Reference's; the DCT, the GEMM and Gram-Schmidt are too on the Serial space (the tests hold
// them to the documented tolerances, which a device's fused multiply-adds may need).
//
// The spans are host memory. In a space that cannot read it, the inputs are copied to the
// device and the outputs back for each call (kokkos_views.hpp); in a host space nothing is
// copied. No header of this one includes Kokkos: only kernels/kokkos/*.cpp do.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "lowcomm/kernels/blocks.hpp"
#include "lowcomm/kernels/scatter.hpp"

namespace lowcomm::kernels::kokkos_backend {

// Kokkos::initialize on first use (finalized at exit), and "Kokkos <version>, execution space
// <name>, matrix products <gemm_provider()>".
void ensure_initialized();
std::string description();

void topk_per_block(std::span<const float> values, std::int64_t block_size, std::int64_t kept,
                    std::span<std::int64_t> indices, std::span<float> selected);
void topk_global(std::span<const float> values, std::int64_t kept, std::span<std::int64_t> indices,
                 std::span<float> selected);

void dct_encode_blocks(const BlockLayout& layout, std::span<const float> tensor, std::span<float> coefficients);
void dct_decode_blocks(const BlockLayout& layout, std::span<const float> coefficients, std::span<float> tensor);

void scatter_add(std::span<const std::int64_t> indices, std::span<const float> values, std::span<float> out);
void scatter_mean_per_block(std::int64_t block_size, std::int64_t k, std::span<const BlockPairs> sources,
                            std::span<float> out);
void gather(std::span<const std::int64_t> indices, std::span<const float> source, std::span<float> out);
void scatter_divided(std::span<const std::int64_t> indices, std::span<const float> values, float divisor,
                     std::span<float> out);

// float16.hpp's conversions of values to and from their wire type (F16 or BF16; F32 is a copy).
void encode_values(std::span<const float> values, bool bf16, std::span<std::byte> out);
void decode_values(std::span<const std::byte> in, bool bf16, std::span<float> out);

// Return the first position that does not fit (pack) or is not below `limit` (unpack), or the
// count when every one does; `bytes` is the index width in bytes.
std::size_t pack_indices(std::span<const std::int64_t> indices, std::size_t bytes, std::span<std::byte> out);
std::size_t unpack_indices(std::span<const std::byte> in, std::size_t bytes, std::uint64_t limit,
                           std::span<std::int64_t> out);
// Returns the first NaN's index, or values.size().
std::size_t pack_signs(std::span<const float> values, std::span<std::byte> out);
void unpack_signs(std::span<const std::byte> in, std::span<float> out);

// quantize.hpp's format; levels = 2^(bits-1) - 1. Returns the first non-finite element's index,
// or x.size(). dequantize returns the first element whose code exceeds 2 levels, or out.size();
// with `sum` it is a step of dequantize_sum: out = (first ? 0 + x̂ : out + x̂) / divisor.
std::size_t quantize(std::span<const float> x, std::size_t group, int bits, int levels, bool stochastic,
                     std::uint64_t seed, std::span<std::byte> codes, std::span<float> scales);
std::size_t dequantize(std::span<const std::byte> codes, std::span<const float> scales, std::size_t group,
                       int bits, int levels, bool sum, bool first, float divisor, std::span<float> out);

void orthonormalize_columns(std::span<float> matrix, std::int64_t rows, std::int64_t cols, float epsilon);
// What computes gemm: "KokkosBlas::gemm" (Kokkos-Kernels) or "Kokkos loops".
const char* gemm_provider();
void gemm(bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
          std::span<const float> a, std::span<const float> b, float beta, std::span<float> c);

}  // namespace lowcomm::kernels::kokkos_backend
