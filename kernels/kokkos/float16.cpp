// fp16 and bf16 wire values (float16.hpp): float16.hpp's branch-free conversions, one value per
// work item, written as two little-endian bytes (the byte span need not be 2-byte aligned).
#include <Kokkos_Core.hpp>

#include "kokkos_views.hpp"
#include "lowcomm/kernels/float16.hpp"

namespace lowcomm::kernels::kokkos_backend {

void encode_values(std::span<const float> values, bool bf16, std::span<std::byte> out) {
  const auto in = input(values);
  Output<unsigned char> bytes(as_uchars(out));
  const auto dst = bytes.view();
  Kokkos::parallel_for("lowcomm::encode_values", Range(0, static_cast<std::int64_t>(values.size())),
                       KOKKOS_LAMBDA(const std::int64_t i) {
                         const std::uint16_t bits = bf16 ? float_to_bf16(in(i)) : float_to_f16(in(i));
                         dst(2 * i) = static_cast<unsigned char>(bits & 0xFF);
                         dst(2 * i + 1) = static_cast<unsigned char>(bits >> 8);
                       });
  bytes.finish();
}

void decode_values(std::span<const std::byte> in, bool bf16, std::span<float> out) {
  const auto src = input(as_uchars(in));
  Output<float> values(out);
  const auto dst = values.view();
  Kokkos::parallel_for("lowcomm::decode_values", Range(0, static_cast<std::int64_t>(out.size())),
                       KOKKOS_LAMBDA(const std::int64_t i) {
                         const auto bits = static_cast<std::uint16_t>(src(2 * i) | (src(2 * i + 1) << 8));
                         dst(i) = bf16 ? bf16_to_float(bits) : f16_to_float(bits);
                       });
  values.finish();
}

}  // namespace lowcomm::kernels::kokkos_backend
