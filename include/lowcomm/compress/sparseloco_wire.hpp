#pragma once
// The pieces of SparseLoCo's wire (tplr-ai/templar, src/tplr/compress.py), as the `sparseloco`
// compressor sends them; public so that tests check them against templar's semantics.
//
// 12-bit indices: each pair (a, b) of indices below 4096 is three bytes
//   [a & 0xff, (a >> 8 & 0xf) | (b & 0xf) << 4, b >> 4]
// (templar's pack_12bit_indices). An odd count is completed by a 0 index, so n indices take
// 3·ceil(n / 2) bytes.
//
// The codebook (templar's _quantize_values with quantization_bins = bins, quantization_range =
// range): per tensor, shift = mean of the values, c = value − shift, σ = ‖c‖ / sqrt(n − 1),
// scale = range·σ / bins (1 where that is 0 or not finite), code = clamp(round-half-even(
// c / scale + bins / 2), 0, bins − 1), and each code decodes to shift + the mean of the c in its
// bin (0 + shift for an empty bin). The sums run in float, in index order.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace lowcomm::sparseloco {

std::size_t packed_12bit_bytes(std::size_t count);
// Throws lowcomm::Error for an index ≥ 4096 or an output of another size.
void pack_12bit(std::span<const std::int64_t> indices, std::span<std::byte> out);
void unpack_12bit(std::span<const std::byte> packed, std::span<std::int64_t> indices);

struct Codebook {
  float shift = 0.0f;
  std::vector<float> lookup;          // per code: the mean of the centred values in its bin
  std::vector<std::uint8_t> codes;    // per value
  float decoded(std::uint8_t code) const { return lookup[code] + shift; }
};
// bins in [2, 256]; range > 0.
Codebook quantize(std::span<const float> values, int bins, double range);

// Codes at `bits` each, least significant bits first, packed into ceil(n·bits / 8) bytes.
std::size_t packed_code_bytes(std::size_t count, int bits);
void pack_codes(std::span<const std::uint8_t> codes, int bits, std::span<std::byte> out);
void unpack_codes(std::span<const std::byte> packed, int bits, std::span<std::uint8_t> codes);

// A codebook on the wire: the codes at `bits` each, then the shift and the `bins` decoded means
// as fp32 (little-endian, as the host stores them).
std::size_t codebook_bytes(std::size_t count, int bins, int bits);
void write_codebook(const Codebook& book, int bits, std::span<std::byte> out);
// The values a received codebook decodes to. Throws lowcomm::Error for a size that disagrees or
// a code past the bins.
void read_codebook(std::span<const std::byte> in, int bins, int bits, std::span<float> values);

}  // namespace lowcomm::sparseloco
