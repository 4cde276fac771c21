// The compact wire formats (pack.hpp): little-endian indices of 1, 2, 4 or 8 bytes or of 12 bits,
// one sign bit per value, and codes of 1 to 8 bits. Every element (index, code), output byte
// (signs, codes) or 12-bit pair is one thread; validity is the first offending position
// (FirstPosition), so the dispatch can name it.
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

__global__ void pack_12bit_kernel(const std::int64_t* in, std::int64_t n, std::int64_t pairs, unsigned char* out,
                                  unsigned long long* first_bad) {
  for (std::int64_t p = first_item(); p < pairs; p += item_stride()) {
    std::uint32_t pair[2] = {0u, 0u};
    for (std::int64_t j = 0; j < 2 && 2 * p + j < n; ++j) {
      const std::int64_t index = in[2 * p + j];
      if (index < 0 || index >= 4096) record(first_bad, 2 * p + j);
      pair[j] = static_cast<std::uint32_t>(index);
    }
    out[3 * p] = static_cast<unsigned char>(pair[0] & 0xFF);
    out[3 * p + 1] = static_cast<unsigned char>(((pair[0] >> 8) & 0x0F) | ((pair[1] & 0x0F) << 4));
    out[3 * p + 2] = static_cast<unsigned char>((pair[1] >> 4) & 0xFF);
  }
}

__global__ void unpack_12bit_kernel(const unsigned char* in, std::int64_t n, std::uint64_t limit, std::int64_t* out,
                                    unsigned long long* first_bad) {
  for (std::int64_t i = first_item(); i < n; i += item_stride()) {
    const std::int64_t p = i / 2;
    const std::uint64_t b0 = in[3 * p], b1 = in[3 * p + 1], b2 = in[3 * p + 2];
    const std::uint64_t value = i % 2 == 0 ? (b0 | (b1 & 0x0F) << 8) : ((b1 >> 4) | b2 << 4);
    if (value >= limit) record(first_bad, i);
    out[i] = static_cast<std::int64_t>(value);
  }
}

// One thread per output byte: the codes with a bit in bits [8·byte, 8·byte + 8).
__global__ void pack_codes_kernel(const unsigned char* in, std::int64_t n, std::int64_t width, std::int64_t bytes,
                                  unsigned char* out, unsigned long long* first_bad) {
  const unsigned mask = (1u << width) - 1u;
  for (std::int64_t byte = first_item(); byte < bytes; byte += item_stride()) {
    unsigned value = 0;
    const std::int64_t last = (8 * byte + 7) / width < n - 1 ? (8 * byte + 7) / width : n - 1;
    for (std::int64_t i = 8 * byte / width; i <= last; ++i) {
      const unsigned code = in[i];
      if ((code & ~mask) != 0) record(first_bad, i);
      const std::int64_t shift = i * width - 8 * byte;
      value |= shift >= 0 ? (code & mask) << shift : (code & mask) >> -shift;
    }
    out[byte] = static_cast<unsigned char>(value & 0xFF);
  }
}

__global__ void unpack_codes_kernel(const unsigned char* in, std::int64_t n, std::int64_t width, std::int64_t bytes,
                                    unsigned limit, unsigned char* out, unsigned long long* first_bad) {
  const unsigned mask = (1u << width) - 1u;
  for (std::int64_t i = first_item(); i < n; i += item_stride()) {
    const std::int64_t at = i * width;
    unsigned window = in[at / 8];
    if (at / 8 + 1 < bytes) window |= static_cast<unsigned>(in[at / 8 + 1]) << 8;
    const unsigned code = (window >> (at % 8)) & mask;
    if (code >= limit) record(first_bad, i);
    out[i] = static_cast<unsigned char>(code);
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

std::size_t pack_12bit(std::span<const std::int64_t> indices, std::span<std::byte> out) {
  const auto n = static_cast<std::int64_t>(indices.size());
  const auto pairs = static_cast<std::int64_t>(out.size() / 3);
  const Input<std::int64_t> in(indices);
  Output<unsigned char> packed(as_uchars(out));
  FirstPosition first_bad(n);
  launch("pack_12bit", pack_12bit_kernel, pairs, in.data(), n, pairs, packed.data(), first_bad.device());
  packed.finish();
  return static_cast<std::size_t>(first_bad.get());
}

std::size_t unpack_12bit(std::span<const std::byte> in, std::uint64_t limit, std::span<std::int64_t> out) {
  const auto n = static_cast<std::int64_t>(out.size());
  const Input<unsigned char> packed(as_uchars(in));
  Output<std::int64_t> unpacked(out);
  FirstPosition first_bad(n);
  launch("unpack_12bit", unpack_12bit_kernel, n, packed.data(), n, limit, unpacked.data(), first_bad.device());
  unpacked.finish();
  return static_cast<std::size_t>(first_bad.get());
}

std::size_t pack_codes(std::span<const std::uint8_t> codes, int bits, std::span<std::byte> out) {
  const auto n = static_cast<std::int64_t>(codes.size());
  const auto bytes = static_cast<std::int64_t>(out.size());
  const Input<unsigned char> in(codes);
  Output<unsigned char> packed(as_uchars(out));
  FirstPosition first_bad(n);
  launch("pack_codes", pack_codes_kernel, bytes, in.data(), n, static_cast<std::int64_t>(bits), bytes, packed.data(),
         first_bad.device());
  packed.finish();
  return static_cast<std::size_t>(first_bad.get());
}

std::size_t unpack_codes(std::span<const std::byte> in, int bits, unsigned limit, std::span<std::uint8_t> out) {
  const auto n = static_cast<std::int64_t>(out.size());
  const auto bytes = static_cast<std::int64_t>(in.size());
  const Input<unsigned char> packed(as_uchars(in));
  Output<unsigned char> unpacked(out);
  FirstPosition first_bad(n);
  launch("unpack_codes", unpack_codes_kernel, n, packed.data(), n, static_cast<std::int64_t>(bits), bytes, limit,
         unpacked.data(), first_bad.device());
  unpacked.finish();
  return static_cast<std::size_t>(first_bad.get());
}

}  // namespace lowcomm::kernels::cuda_backend
