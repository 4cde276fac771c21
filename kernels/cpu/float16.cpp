#include "lowcomm/kernels/float16.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "lowcomm/core/simd_clones.hpp"
#include "lowcomm/error.hpp"
#if LOWCOMM_HAVE_KOKKOS
#include "../kokkos/kokkos_backend.hpp"
#endif
#if LOWCOMM_HAVE_CUDA
#include "../cuda/cuda_backend.hpp"
#endif

namespace lowcomm::kernels {

std::size_t value_bytes(ValueType type) { return type == ValueType::F32 ? 4 : 2; }

namespace {

LOWCOMM_SIMD_CLONES
void encode_16bit(const float* values, std::size_t n, ValueType type, std::uint16_t* out) {
  if (type == ValueType::F16) {
    for (std::size_t i = 0; i < n; ++i) out[i] = float_to_f16(values[i]);
  } else {
    for (std::size_t i = 0; i < n; ++i) out[i] = float_to_bf16(values[i]);
  }
}

LOWCOMM_SIMD_CLONES
void decode_16bit(const std::uint16_t* in, std::size_t n, ValueType type, float* out) {
  if (type == ValueType::F16) {
    for (std::size_t i = 0; i < n; ++i) out[i] = f16_to_float(in[i]);
  } else {
    for (std::size_t i = 0; i < n; ++i) out[i] = bf16_to_float(in[i]);
  }
}

// Converted in pieces through an aligned buffer of uint16, so that the loops work on uint16
// arrays, whatever the alignment of the byte span (little-endian hosts: x86, Arm).
constexpr std::size_t kPiece = 4096;

}  // namespace

void encode_values(Backend backend, std::span<const float> values, ValueType type, std::span<std::byte> out) {
  if (out.size() != values.size() * value_bytes(type)) {
    throw Error(fmt::format("encode_values: {} values need {} bytes, got {}", values.size(),
                            values.size() * value_bytes(type), out.size()));
  }
  switch (backend) {
    case Backend::Reference:
    case Backend::Cpu: break;
    case Backend::Kokkos:
#if LOWCOMM_HAVE_KOKKOS
      if (type != ValueType::F32) return kokkos_backend::encode_values(values, type == ValueType::BF16, out);
      break;
#else
      unsupported("encode_values", backend);
#endif
    case Backend::Cuda:
#if LOWCOMM_HAVE_CUDA
      if (type != ValueType::F32) return cuda_backend::encode_values(values, type == ValueType::BF16, out);
      break;
#else
      unsupported("encode_values", backend);
#endif
  }
  if (type == ValueType::F32) {
    std::memcpy(out.data(), values.data(), out.size());  // little-endian hosts only (x86, Arm)
    return;
  }
  // Pieces are independent: Cpu converts them on all threads (a bf16 run's activations are large).
  const auto pieces = static_cast<std::int64_t>((values.size() + kPiece - 1) / kPiece);
#pragma omp parallel for schedule(static) if (backend == Backend::Cpu && pieces > 16)
  for (std::int64_t piece = 0; piece < pieces; ++piece) {
    std::uint16_t bits[kPiece];
    const auto begin = static_cast<std::size_t>(piece) * kPiece;
    const std::size_t n = std::min(kPiece, values.size() - begin);
    encode_16bit(values.data() + begin, n, type, bits);
    std::memcpy(out.data() + 2 * begin, bits, 2 * n);
  }
}

void decode_values(Backend backend, std::span<const std::byte> in, ValueType type, std::span<float> out) {
  if (in.size() != out.size() * value_bytes(type)) {
    throw Error(fmt::format("decode_values: {} values need {} bytes, the payload has {}", out.size(),
                            out.size() * value_bytes(type), in.size()));
  }
  switch (backend) {
    case Backend::Reference:
    case Backend::Cpu: break;
    case Backend::Kokkos:
#if LOWCOMM_HAVE_KOKKOS
      if (type != ValueType::F32) return kokkos_backend::decode_values(in, type == ValueType::BF16, out);
      break;
#else
      unsupported("decode_values", backend);
#endif
    case Backend::Cuda:
#if LOWCOMM_HAVE_CUDA
      if (type != ValueType::F32) return cuda_backend::decode_values(in, type == ValueType::BF16, out);
      break;
#else
      unsupported("decode_values", backend);
#endif
  }
  if (type == ValueType::F32) {
    std::memcpy(out.data(), in.data(), in.size());
    return;
  }
  const auto pieces = static_cast<std::int64_t>((out.size() + kPiece - 1) / kPiece);
#pragma omp parallel for schedule(static) if (backend == Backend::Cpu && pieces > 16)
  for (std::int64_t piece = 0; piece < pieces; ++piece) {
    std::uint16_t bits[kPiece];
    const auto begin = static_cast<std::size_t>(piece) * kPiece;
    const std::size_t n = std::min(kPiece, out.size() - begin);
    std::memcpy(bits, in.data() + 2 * begin, 2 * n);
    decode_16bit(bits, n, type, out.data() + begin);
  }
}

void encode_values(std::span<const float> values, ValueType type, std::span<std::byte> out) {
  encode_values(Backend::Cpu, values, type, out);
}

void decode_values(std::span<const std::byte> in, ValueType type, std::span<float> out) {
  decode_values(Backend::Cpu, in, type, out);
}

}  // namespace lowcomm::kernels
