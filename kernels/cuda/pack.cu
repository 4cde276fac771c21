// The compact wire formats (pack.hpp): little-endian indices of 1, 2, 4 or 8 bytes, and one sign
// bit per value. Every element (index) or byte (signs) is one thread; validity is the first
// offending position (FirstPosition), so the dispatch can name it.
#include <limits>

#include "cuda_memory.cuh"

namespace lowcomm::kernels::cuda_backend {

namespace {

// The largest index a width holds; 8 bytes keep the sign bit clear (as kernels/cpu).
std::uint64_t max_index(std::size_t bytes) {
  return bytes == 8 ? static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())
                    : (std::uint64_t{1} << (8 * bytes)) - 1;
}

__global__ void pack_indices_kernel(const std::int64_t* in, std::int64_t n, std::int64_t width, std::uint64_t max,
                                    unsigned char* out, unsigned long long* first_bad) {
  for (std::int64_t i = first_item(); i < n; i += item_stride()) {
    const std::int64_t index = in[i];
    if (index < 0 || static_cast<std::uint64_t>(index) > max) record(first_bad, i);
    const auto value = static_cast<std::uint64_t>(index);
    for (std::int64_t b = 0; b < width; ++b) out[i * width + b] = static_cast<unsigned char>(value >> (8 * b));
  }
}

__global__ void unpack_indices_kernel(const unsigned char* in, std::int64_t n, std::int64_t width, std::uint64_t max,
                                      std::uint64_t limit, std::int64_t* out, unsigned long long* first_bad) {
  for (std::int64_t i = first_item(); i < n; i += item_stride()) {
    std::uint64_t value = 0;
    for (std::int64_t b = 0; b < width; ++b) value |= static_cast<std::uint64_t>(in[i * width + b]) << (8 * b);
    if (!(value < limit && value <= max)) record(first_bad, i);
    out[i] = static_cast<std::int64_t>(value);
  }
}

__global__ void pack_signs_kernel(const float* in, std::int64_t n, std::int64_t bytes, unsigned char* out,
                                  unsigned long long* first_nan) {
  for (std::int64_t byte = first_item(); byte < bytes; byte += item_stride()) {
    unsigned bits = 0;
    const std::int64_t end = n < 8 * byte + 8 ? n : 8 * byte + 8;
    for (std::int64_t i = 8 * byte; i < end; ++i) {
      const float v = in[i];
      if (v != v) record(first_nan, i);
      bits |= (bits_of(v) >> 31) << (i - 8 * byte);
    }
    out[byte] = static_cast<unsigned char>(bits);
  }
}

__global__ void unpack_signs_kernel(const unsigned char* in, std::int64_t n, float* out) {
  for (std::int64_t i = first_item(); i < n; i += item_stride()) {
    out[i] = ((in[i / 8] >> (i % 8)) & 1u) != 0 ? -1.0f : 1.0f;
  }
}

}  // namespace

std::size_t pack_indices(std::span<const std::int64_t> indices, std::size_t bytes, std::span<std::byte> out) {
  const auto n = static_cast<std::int64_t>(indices.size());
  const Input<std::int64_t> in(indices);
  Output<unsigned char> packed(as_uchars(out));
  FirstPosition first_bad(n);
  launch("pack_indices", pack_indices_kernel, n, in.data(), n, static_cast<std::int64_t>(bytes), max_index(bytes),
         packed.data(), first_bad.device());
  packed.finish();
  return static_cast<std::size_t>(first_bad.get());
}

std::size_t unpack_indices(std::span<const std::byte> in, std::size_t bytes, std::uint64_t limit,
                           std::span<std::int64_t> out) {
  const auto n = static_cast<std::int64_t>(out.size());
  const Input<unsigned char> packed(as_uchars(in));
  Output<std::int64_t> unpacked(out);
  FirstPosition first_bad(n);
  launch("unpack_indices", unpack_indices_kernel, n, packed.data(), n, static_cast<std::int64_t>(bytes),
         max_index(bytes), limit, unpacked.data(), first_bad.device());
  unpacked.finish();
  return static_cast<std::size_t>(first_bad.get());
}

std::size_t pack_signs(std::span<const float> values, std::span<std::byte> out) {
  const auto n = static_cast<std::int64_t>(values.size());
  const auto bytes = static_cast<std::int64_t>(out.size());
  const Input<float> in(values);
  Output<unsigned char> packed(as_uchars(out));
  FirstPosition first_nan(n);
  launch("pack_signs", pack_signs_kernel, bytes, in.data(), n, bytes, packed.data(), first_nan.device());
  packed.finish();
  return static_cast<std::size_t>(first_nan.get());
}

void unpack_signs(std::span<const std::byte> in, std::span<float> out) {
  const auto n = static_cast<std::int64_t>(out.size());
  const Input<unsigned char> packed(as_uchars(in));
  Output<float> unpacked(out);
  launch("unpack_signs", unpack_signs_kernel, n, packed.data(), n, unpacked.data());
  unpacked.finish();
}

}  // namespace lowcomm::kernels::cuda_backend
