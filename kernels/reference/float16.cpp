// float16.hpp's conversions, one value at a time in index order (../float16_pieces.hpp, the
// loops the Cpu backend runs on all threads).
#include "../backend_kernels.hpp"
#include "../float16_pieces.hpp"

namespace lowcomm::kernels::reference_backend {

void encode_values(std::span<const float> values, bool bf16, std::span<std::byte> out) {
  detail::encode_pieces</*Parallel=*/false>(values, bf16, out);
}

void decode_values(std::span<const std::byte> in, bool bf16, std::span<float> out) {
  detail::decode_pieces</*Parallel=*/false>(in, bf16, out);
}

}  // namespace lowcomm::kernels::reference_backend
