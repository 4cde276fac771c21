#include "lowcomm/kernels/float16.hpp"

#include <fmt/format.h>

#include <bit>
#include <cmath>
#include <cstring>

#include "lowcomm/error.hpp"

namespace lowcomm::kernels {

std::size_t value_bytes(ValueType type) { return type == ValueType::F32 ? 4 : 2; }

std::uint16_t float_to_f16(float value) {
  const auto x = std::bit_cast<std::uint32_t>(value);
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  std::uint32_t mantissa = x & 0x7FFFFFu;
  const int exponent = static_cast<int>((x >> 23) & 0xFFu);
  if (exponent == 0xFF) return static_cast<std::uint16_t>(sign | 0x7C00u | (mantissa != 0 ? 0x200u : 0u));
  const int e = exponent - 127 + 15;  // the exponent in binary16's bias
  if (e >= 0x1F) return static_cast<std::uint16_t>(sign | 0x7C00u);  // too large: infinity
  if (e <= 0) {
    // Subnormal in binary16 (or zero): the value is m · 2^-24 with m = 1.mantissa · 2^(e + 9).
    if (e < -10) return static_cast<std::uint16_t>(sign);
    mantissa |= 0x800000u;
    const int shift = 14 - e;
    std::uint32_t half = mantissa >> shift;
    const std::uint32_t rest = mantissa & ((1u << shift) - 1u);
    const std::uint32_t halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (half & 1u) != 0)) ++half;
    return static_cast<std::uint16_t>(sign | half);
  }
  std::uint32_t half = sign | (static_cast<std::uint32_t>(e) << 10) | (mantissa >> 13);
  const std::uint32_t rest = mantissa & 0x1FFFu;
  // A carry out of the mantissa correctly bumps the exponent (up to infinity).
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u) != 0)) ++half;
  return static_cast<std::uint16_t>(half);
}

float f16_to_float(std::uint16_t bits) {
  const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000u) << 16;
  const std::uint32_t exponent = (bits >> 10) & 0x1Fu;
  const std::uint32_t mantissa = bits & 0x3FFu;
  if (exponent == 0) {
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);  // exact
    return sign != 0 ? -magnitude : magnitude;
  }
  if (exponent == 0x1F) return std::bit_cast<float>(sign | 0x7F800000u | (mantissa << 13));
  return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

std::uint16_t float_to_bf16(float value) {
  const auto x = std::bit_cast<std::uint32_t>(value);
  if (std::isnan(value)) return static_cast<std::uint16_t>((x >> 16) | 0x40u);  // stay NaN
  const std::uint32_t rounding = 0x7FFFu + ((x >> 16) & 1u);
  return static_cast<std::uint16_t>((x + rounding) >> 16);
}

float bf16_to_float(std::uint16_t bits) { return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16); }

void encode_values(std::span<const float> values, ValueType type, std::span<std::byte> out) {
  if (out.size() != values.size() * value_bytes(type)) {
    throw Error(fmt::format("encode_values: {} values need {} bytes, got {}", values.size(),
                            values.size() * value_bytes(type), out.size()));
  }
  if (type == ValueType::F32) {
    std::memcpy(out.data(), values.data(), out.size());  // little-endian hosts only (x86, Arm)
    return;
  }
  for (std::size_t i = 0; i < values.size(); ++i) {
    const std::uint16_t bits = type == ValueType::F16 ? float_to_f16(values[i]) : float_to_bf16(values[i]);
    std::memcpy(out.data() + 2 * i, &bits, 2);
  }
}

void decode_values(std::span<const std::byte> in, ValueType type, std::span<float> out) {
  if (in.size() != out.size() * value_bytes(type)) {
    throw Error(fmt::format("decode_values: {} values need {} bytes, the payload has {}", out.size(),
                            out.size() * value_bytes(type), in.size()));
  }
  if (type == ValueType::F32) {
    std::memcpy(out.data(), in.data(), in.size());
    return;
  }
  for (std::size_t i = 0; i < out.size(); ++i) {
    std::uint16_t bits = 0;
    std::memcpy(&bits, in.data() + 2 * i, 2);
    out[i] = type == ValueType::F16 ? f16_to_float(bits) : bf16_to_float(bits);
  }
}

}  // namespace lowcomm::kernels
