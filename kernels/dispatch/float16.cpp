#include "lowcomm/kernels/float16.hpp"

#include <cstring>

#include <fmt/format.h>

#include "dispatch.hpp"
#include "lowcomm/error.hpp"

namespace lowcomm::kernels {

std::size_t value_bytes(ValueType type) { return type == ValueType::F32 ? 4 : 2; }

// F32 is the values' own bytes on every backend: a host copy (the spans are host memory).
void encode_values(Backend backend, std::span<const float> values, ValueType type, std::span<std::byte> out) {
  if (out.size() != values.size() * value_bytes(type)) {
    throw Error(fmt::format("encode_values: {} values need {} bytes, got {}", values.size(),
                            values.size() * value_bytes(type), out.size()));
  }
  if (type == ValueType::F32) {
    // Little-endian hosts only (x86, Arm). An empty span may hold a null pointer, which memcpy
    // must not be given even for 0 bytes.
    if (!out.empty()) std::memcpy(out.data(), values.data(), out.size());
    return;
  }
  LOWCOMM_DISPATCH(backend, encode_values, values, type == ValueType::BF16, out);
}

void decode_values(Backend backend, std::span<const std::byte> in, ValueType type, std::span<float> out) {
  if (in.size() != out.size() * value_bytes(type)) {
    throw Error(fmt::format("decode_values: {} values need {} bytes, the payload has {}", out.size(),
                            out.size() * value_bytes(type), in.size()));
  }
  if (type == ValueType::F32) {
    if (!in.empty()) std::memcpy(out.data(), in.data(), in.size());
    return;
  }
  LOWCOMM_DISPATCH(backend, decode_values, in, type == ValueType::BF16, out);
}

void encode_values(std::span<const float> values, ValueType type, std::span<std::byte> out) {
  encode_values(Backend::Cpu, values, type, out);
}

void decode_values(std::span<const std::byte> in, ValueType type, std::span<float> out) {
  decode_values(Backend::Cpu, in, type, out);
}

}  // namespace lowcomm::kernels
