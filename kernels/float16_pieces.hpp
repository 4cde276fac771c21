#pragma once
// float16.hpp's array conversions on the host, shared by the Reference and the Cpu backend: the
// same loops, which Cpu runs on all threads (Parallel) and Reference on one.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "lowcomm/core/simd_clones.hpp"
#include "lowcomm/kernels/float16.hpp"

namespace lowcomm::kernels::detail {

LOWCOMM_SIMD_CLONES
inline void encode_16bit(const float* values, std::size_t n, bool bf16, std::uint16_t* out) {
  if (!bf16) {
    for (std::size_t i = 0; i < n; ++i) out[i] = float_to_f16(values[i]);
  } else {
    for (std::size_t i = 0; i < n; ++i) out[i] = float_to_bf16(values[i]);
  }
}

LOWCOMM_SIMD_CLONES
inline void decode_16bit(const std::uint16_t* in, std::size_t n, bool bf16, float* out) {
  if (!bf16) {
    for (std::size_t i = 0; i < n; ++i) out[i] = f16_to_float(in[i]);
  } else {
    for (std::size_t i = 0; i < n; ++i) out[i] = bf16_to_float(in[i]);
  }
}

// Converted in pieces through an aligned buffer of uint16, so that the loops work on uint16
// arrays, whatever the alignment of the byte span (little-endian hosts: x86, Arm).
inline constexpr std::size_t kFloat16Piece = 4096;

// Pieces are independent: Cpu converts them on all threads (a bf16 run's activations are large).
template <bool Parallel>
void encode_pieces(std::span<const float> values, bool bf16, std::span<std::byte> out) {
  constexpr std::size_t kPiece = kFloat16Piece;
  const auto pieces = static_cast<std::int64_t>((values.size() + kPiece - 1) / kPiece);
#pragma omp parallel for schedule(static) if (Parallel && pieces > 16)
  for (std::int64_t piece = 0; piece < pieces; ++piece) {
    std::uint16_t bits[kPiece];
    const auto begin = static_cast<std::size_t>(piece) * kPiece;
    const std::size_t n = std::min(kPiece, values.size() - begin);
    encode_16bit(values.data() + begin, n, bf16, bits);
    std::memcpy(out.data() + 2 * begin, bits, 2 * n);
  }
}

template <bool Parallel>
void decode_pieces(std::span<const std::byte> in, bool bf16, std::span<float> out) {
  constexpr std::size_t kPiece = kFloat16Piece;
  const auto pieces = static_cast<std::int64_t>((out.size() + kPiece - 1) / kPiece);
#pragma omp parallel for schedule(static) if (Parallel && pieces > 16)
  for (std::int64_t piece = 0; piece < pieces; ++piece) {
    std::uint16_t bits[kPiece];
    const auto begin = static_cast<std::size_t>(piece) * kPiece;
    const std::size_t n = std::min(kPiece, out.size() - begin);
    std::memcpy(bits, in.data() + 2 * begin, 2 * n);
    decode_16bit(bits, n, bf16, out.data() + begin);
  }
}

}  // namespace lowcomm::kernels::detail
