#pragma once
// IEEE binary16 (fp16) and bfloat16 as 16-bit storage for values on the wire. Conversions round
// to nearest, ties to even (as PyTorch's .half() and .bfloat16() do on CPU); infinities and NaN
// are kept (NaN stays NaN, its payload is not preserved).
#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>

#include "lowcomm/core/host_device.hpp"
#include "lowcomm/kernels/backend_name.hpp"

namespace lowcomm::kernels {

enum class ValueType : std::uint8_t { F32, F16, BF16 };

std::size_t value_bytes(ValueType type);  // 4, 2, 2

// One value each way. Written without branches (every case computed, then chosen with masks) so
// that the loops over arrays below vectorise.
namespace detail {
// a where the condition holds, else b.
LOWCOMM_HOST_DEVICE inline std::uint32_t choose(bool condition, std::uint32_t a, std::uint32_t b) {
  const std::uint32_t mask = 0u - static_cast<std::uint32_t>(condition);
  return (a & mask) | (b & ~mask);
}
}  // namespace detail

// Rounds with the FPU's own round-to-nearest-even instead of shifting bits by variable amounts
// (which does not vectorise): a subnormal result is the float sum |x| + 2^-1 (whose last ten
// mantissa bits are then binary16's), a normal one the rebiased bits plus a rounding bias that
// carries into the exponent exactly when it should (up to infinity). The same bits as the plain
// definition for every one of the 2^32 floats (checked exhaustively when this was written).
LOWCOMM_HOST_DEVICE inline std::uint16_t float_to_f16(float value) {
  using detail::choose;
  const auto x = std::bit_cast<std::uint32_t>(value);
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  const std::uint32_t magnitude = x & 0x7FFFFFFFu;
  constexpr std::uint32_t kInfinity = 0xFFu << 23;
  constexpr std::uint32_t kOverflow = (127u + 16u) << 23;      // 2^16: this and above round to inf
  constexpr std::uint32_t kSmallestNormal = 113u << 23;       // 2^-14, binary16's smallest normal
  constexpr std::uint32_t kSubnormalMagic = (127u - 1u) << 23;  // 0.5: its ulp is 2^-24
  const std::uint32_t special = choose(magnitude > kInfinity, 0x7E00u, 0x7C00u);  // quiet NaN, inf
  const std::uint32_t subnormal =
      std::bit_cast<std::uint32_t>(std::bit_cast<float>(magnitude) + std::bit_cast<float>(kSubnormalMagic)) -
      kSubnormalMagic;
  const std::uint32_t odd = (magnitude >> 13) & 1u;
  const std::uint32_t normal = (magnitude + ((15u - 127u) << 23) + 0xFFFu + odd) >> 13;
  const std::uint32_t half =
      choose(magnitude >= kOverflow, special, choose(magnitude < kSmallestNormal, subnormal, normal));
  return static_cast<std::uint16_t>(sign | half);
}

LOWCOMM_HOST_DEVICE inline float f16_to_float(std::uint16_t bits) {
  const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000u) << 16;
  const std::uint32_t exponent = (bits >> 10) & 0x1Fu;
  const std::uint32_t mantissa = bits & 0x3FFu;
  const std::uint32_t subnormal = std::bit_cast<std::uint32_t>(static_cast<float>(mantissa) * 0x1p-24f);  // exact
  const std::uint32_t special = 0x7F800000u | (mantissa << 13);
  const std::uint32_t normal = ((exponent + 112) << 23) | (mantissa << 13);
  return std::bit_cast<float>(
      sign | detail::choose(exponent == 0, subnormal, detail::choose(exponent == 0x1F, special, normal)));
}

LOWCOMM_HOST_DEVICE inline std::uint16_t float_to_bf16(float value) {
  const auto x = std::bit_cast<std::uint32_t>(value);
  const bool nan = (x & 0x7FFFFFFFu) > 0x7F800000u;
  const std::uint32_t rounded = (x + 0x7FFFu + ((x >> 16) & 1u)) >> 16;
  return static_cast<std::uint16_t>(detail::choose(nan, (x >> 16) | 0x40u, rounded));  // a NaN stays NaN
}

LOWCOMM_HOST_DEVICE inline float bf16_to_float(std::uint16_t bits) { return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16); }

// values as `type`, little-endian, value_bytes(type) bytes each; out.size() must match.
void encode_values(Backend backend, std::span<const float> values, ValueType type, std::span<std::byte> out);
// The inverse; in.size() must be exactly value_bytes(type) · out.size() (throws otherwise).
void decode_values(Backend backend, std::span<const std::byte> in, ValueType type, std::span<float> out);

// The same on the CPU (Backend::Cpu), for host code that has no execution context.
void encode_values(std::span<const float> values, ValueType type, std::span<std::byte> out);
void decode_values(std::span<const std::byte> in, ValueType type, std::span<float> out);

}  // namespace lowcomm::kernels
