// fp16 and bf16 wire values (float16.hpp): float16.hpp's branch-free conversions, one value per
// thread, written as two little-endian bytes (the byte span need not be 2-byte aligned).
#include "cuda_memory.cuh"
#include "lowcomm/kernels/float16.hpp"

namespace lowcomm::kernels::cuda_backend {

namespace {

__global__ void encode_kernel(const float* in, std::int64_t n, bool bf16, unsigned char* out) {
  for (std::int64_t i = first_item(); i < n; i += item_stride()) {
    const std::uint16_t bits = bf16 ? float_to_bf16(in[i]) : float_to_f16(in[i]);
    out[2 * i] = static_cast<unsigned char>(bits & 0xFF);
    out[2 * i + 1] = static_cast<unsigned char>(bits >> 8);
  }
}

__global__ void decode_kernel(const unsigned char* in, std::int64_t n, bool bf16, float* out) {
  for (std::int64_t i = first_item(); i < n; i += item_stride()) {
    const auto bits = static_cast<std::uint16_t>(in[2 * i] | (in[2 * i + 1] << 8));
    out[i] = bf16 ? bf16_to_float(bits) : f16_to_float(bits);
  }
}

}  // namespace

void encode_values(std::span<const float> values, bool bf16, std::span<std::byte> out) {
  const Input<float> in(values);
  Output<unsigned char> bytes(as_uchars(out));
  launch("encode_values", encode_kernel, static_cast<std::int64_t>(values.size()), in.data(),
         static_cast<std::int64_t>(values.size()), bf16, bytes.data());
  bytes.finish();
}

void decode_values(std::span<const std::byte> in, bool bf16, std::span<float> out) {
  const Input<unsigned char> bytes(as_uchars(in));
  Output<float> values(out);
  launch("decode_values", decode_kernel, static_cast<std::int64_t>(out.size()), bytes.data(),
         static_cast<std::int64_t>(out.size()), bf16, values.data());
  values.finish();
}

}  // namespace lowcomm::kernels::cuda_backend
