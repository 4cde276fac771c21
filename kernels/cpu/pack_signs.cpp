// 1-bit values (include/lowcomm/kernels/pack.hpp): Reference sets one bit at a time; Cpu builds
// each byte from eight sign bits read straight from the float representation (a loop the
// compiler vectorises) and splits large arrays over OpenMP threads, one byte per iteration so
// that no two threads write the same byte.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>

#include <fmt/format.h>

#include "lowcomm/error.hpp"
#if LOWCOMM_HAVE_KOKKOS
#include "../kokkos/kokkos_backend.hpp"
#endif
#if LOWCOMM_HAVE_CUDA
#include "../cuda/cuda_backend.hpp"
#endif
#include "lowcomm/kernels/pack.hpp"

namespace lowcomm::kernels {
namespace {

// Below this many output bytes starting threads costs more than the packing saves.
constexpr std::size_t kParallelMin = std::size_t{1} << 13;
constexpr std::uint32_t kOne = 0x3F800000;  // the bits of 1.0f

[[noreturn]] void throw_nan(std::size_t index) {
  throw Error(fmt::format("pack_signs: value {} is NaN, which has no sign to send", index));
}

// The bits of the last byte that no value uses must be zero in a well-formed payload.
void check_padding(std::span<const std::byte> in, std::size_t count) {
  const std::size_t used = count % 8;
  if (used == 0) return;
  const auto last = std::to_integer<unsigned>(in.back());
  if ((last >> used) != 0) {
    throw Error(fmt::format("unpack_signs: malformed payload: padding bits of the last byte are "
                            "set (byte 0x{:02x}, {} of its bits used)", last, used));
  }
}

void pack_reference(std::span<const float> values, std::span<std::byte> out) {
  std::fill(out.begin(), out.end(), std::byte{0});
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (std::isnan(values[i])) throw_nan(i);
    if (std::signbit(values[i])) out[i / 8] |= static_cast<std::byte>(1u << (i % 8));
  }
}

void unpack_reference(std::span<const std::byte> in, std::span<float> out) {
  for (std::size_t i = 0; i < out.size(); ++i) {
    const bool negative = ((std::to_integer<unsigned>(in[i / 8]) >> (i % 8)) & 1u) != 0;
    out[i] = negative ? -1.0f : 1.0f;
  }
}

void pack_cpu(std::span<const float> values, std::span<std::byte> out) {
  const float* src = values.data();
  std::byte* dst = out.data();
  const std::size_t n = values.size();
  const std::size_t bytes = out.size();
  std::size_t first_bad_byte = bytes;
#pragma omp parallel for schedule(static) reduction(min : first_bad_byte) if (bytes >= kParallelMin)
  for (std::size_t b = 0; b < bytes; ++b) {
    const std::size_t begin = 8 * b;
    const std::size_t len = std::min<std::size_t>(8, n - begin);
    unsigned bits = 0;
    bool nan = false;
    for (std::size_t j = 0; j < len; ++j) {
      const float v = src[begin + j];
      bits |= (std::bit_cast<std::uint32_t>(v) >> 31) << j;
      nan |= v != v;
    }
    dst[b] = static_cast<std::byte>(bits);
    if (nan) first_bad_byte = std::min(first_bad_byte, b);
  }
  if (first_bad_byte < bytes) {
    std::size_t i = 8 * first_bad_byte;
    while (!std::isnan(values[i])) ++i;
    throw_nan(i);
  }
}

void unpack_cpu(std::span<const std::byte> in, std::span<float> out) {
  const std::byte* src = in.data();
  float* dst = out.data();
  const std::size_t n = out.size();
  const std::size_t bytes = in.size();
#pragma omp parallel for schedule(static) if (bytes >= kParallelMin)
  for (std::size_t b = 0; b < bytes; ++b) {
    const std::size_t begin = 8 * b;
    const std::size_t len = std::min<std::size_t>(8, n - begin);
    const auto bits = std::to_integer<std::uint32_t>(src[b]);
    if (len == 8) {
      // A fixed trip count and the sign bit set directly into 1.0f's pattern: vectorisable.
      for (std::size_t j = 0; j < 8; ++j) {
        dst[begin + j] = std::bit_cast<float>(kOne | (((bits >> j) & 1u) << 31));
      }
    } else {
      for (std::size_t j = 0; j < len; ++j) dst[begin + j] = ((bits >> j) & 1u) ? -1.0f : 1.0f;
    }
  }
}

}  // namespace

std::size_t packed_sign_bytes(std::size_t count) { return count / 8 + (count % 8 != 0); }

void pack_signs(Backend backend, std::span<const float> values, std::span<std::byte> out) {
  if (out.size() != packed_sign_bytes(values.size())) {
    throw Error(fmt::format("pack_signs: output holds {} bytes, {} values need {}", out.size(),
                            values.size(), packed_sign_bytes(values.size())));
  }
  switch (backend) {
    case Backend::Reference: return pack_reference(values, out);
    case Backend::Cpu: return pack_cpu(values, out);
    case Backend::Kokkos:
#if LOWCOMM_HAVE_KOKKOS
      if (const std::size_t nan = kokkos_backend::pack_signs(values, out); nan < values.size()) throw_nan(nan);
      return;
#endif
      break;
    case Backend::Cuda:
#if LOWCOMM_HAVE_CUDA
      if (const std::size_t nan = cuda_backend::pack_signs(values, out); nan < values.size()) throw_nan(nan);
      return;
#endif
      break;
  }
  unsupported("pack_signs", backend);
}

void unpack_signs(Backend backend, std::span<const std::byte> in, std::span<float> out) {
  if (in.size() != packed_sign_bytes(out.size())) {
    throw Error(fmt::format("unpack_signs: malformed payload: {} bytes, {} values need exactly {}",
                            in.size(), out.size(), packed_sign_bytes(out.size())));
  }
  check_padding(in, out.size());
  switch (backend) {
    case Backend::Reference: return unpack_reference(in, out);
    case Backend::Cpu: return unpack_cpu(in, out);
    case Backend::Kokkos:
#if LOWCOMM_HAVE_KOKKOS
      return kokkos_backend::unpack_signs(in, out);
#endif
      break;
    case Backend::Cuda:
#if LOWCOMM_HAVE_CUDA
      return cuda_backend::unpack_signs(in, out);
#endif
      break;
  }
  unsupported("unpack_signs", backend);
}

}  // namespace lowcomm::kernels
