#pragma once
// IEEE binary16 (fp16) and bfloat16 as 16-bit storage for values on the wire. Conversions round
// to nearest, ties to even (as PyTorch's .half() and .bfloat16() do on CPU); infinities and NaN
// are kept (NaN stays NaN, its payload is not preserved).
#include <cstdint>
#include <cstddef>
#include <span>

namespace lowcomm::kernels {

enum class ValueType : std::uint8_t { F32, F16, BF16 };

std::size_t value_bytes(ValueType type);  // 4, 2, 2

std::uint16_t float_to_f16(float value);
float f16_to_float(std::uint16_t bits);
std::uint16_t float_to_bf16(float value);
float bf16_to_float(std::uint16_t bits);

// values as `type`, little-endian, value_bytes(type) bytes each; out.size() must match.
void encode_values(std::span<const float> values, ValueType type, std::span<std::byte> out);
// The inverse; in.size() must be exactly value_bytes(type) · out.size() (throws otherwise).
void decode_values(std::span<const std::byte> in, ValueType type, std::span<float> out);

}  // namespace lowcomm::kernels
