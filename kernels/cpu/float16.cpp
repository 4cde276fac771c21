// float16.hpp's conversions on the Cpu backend: the Reference's loops (../float16_pieces.hpp),
// their pieces spread over the OpenMP threads.
#include "../backend_kernels.hpp"
#include "../float16_pieces.hpp"

namespace lowcomm::kernels::cpu_backend {

void encode_values(std::span<const float> values, bool bf16, std::span<std::byte> out) {
  detail::encode_pieces</*Parallel=*/true>(values, bf16, out);
}

void decode_values(std::span<const std::byte> in, bool bf16, std::span<float> out) {
  detail::decode_pieces</*Parallel=*/true>(in, bf16, out);
}

}  // namespace lowcomm::kernels::cpu_backend
