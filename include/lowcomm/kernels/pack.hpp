#pragma once
// Compact wire formats for sparse payloads (REFERENCE.md §1): indices in the smallest unsigned
// integer type that holds every index of the tensor or at 12 bits each (SparseLoCo's), values
// sent as one sign bit each (Psyche's quantize_1bit), and codes of 1 to 8 bits (a codebook's).
// Every format is little-endian and independent of the host.
//
// The unpack functions decode bytes received from other ranks: they check the exact size and
// every decoded value before trusting it and throw lowcomm::Error on a malformed payload; they
// never read or write outside the given spans. When one throws, `out` holds unspecified values.
#include <cstddef>
#include <cstdint>
#include <span>

#include "lowcomm/kernels/backend_name.hpp"

namespace lowcomm::kernels {

// Bytes per packed index. I64 is the reference implementation's format (int64 indices).
enum class IndexWidth : std::uint8_t { U8 = 1, U16 = 2, U32 = 4, I64 = 8 };

// The smallest width that holds every index < limit: limit ≤ 256 → U8, ≤ 65536 → U16,
// ≤ 2^32 → U32, else I64.
IndexWidth smallest_index_width(std::uint64_t limit);

// count · width bytes; throws when that does not fit in std::size_t.
std::size_t packed_index_bytes(std::size_t count, IndexWidth width);

// Writes indices[i] as a little-endian unsigned integer of `width` bytes at out[i·width].
// out.size() must be packed_index_bytes(indices.size(), width). A negative index, or one too
// large for `width`, throws naming its position and value (nothing is silently truncated).
void pack_indices(Backend backend, std::span<const std::int64_t> indices, IndexWidth width,
                  std::span<std::byte> out);

// The inverse of pack_indices. in.size() must be exactly packed_index_bytes(out.size(), width),
// and every decoded index must be < limit (the size of the tensor it addresses) and fit in an
// int64; otherwise throws naming the first offending position and value.
void unpack_indices(Backend backend, std::span<const std::byte> in, IndexWidth width,
                    std::uint64_t limit, std::span<std::int64_t> out);

// ceil(count / 8).
std::size_t packed_sign_bytes(std::size_t count);

// Bit i of the payload (bit i % 8, least significant first, of byte i / 8) is set when
// values[i] is negative by std::signbit: −0.0 counts as negative, so its sign survives, and
// ±inf pack like any other value. A NaN has no meaningful sign and throws naming its index.
// The unused high bits of the last byte are zero. out.size() must be packed_sign_bytes(n).
void pack_signs(Backend backend, std::span<const float> values, std::span<std::byte> out);

// A set bit decodes to −1.0f, a clear one to +1.0f (Psyche: received true → −1). in.size()
// must be exactly packed_sign_bytes(out.size()); non-zero padding bits in the last byte mean
// the payload was not produced by pack_signs for this count, and throw.
void unpack_signs(Backend backend, std::span<const std::byte> in, std::span<float> out);

// 12-bit indices, as templar's pack_12bit_indices: each pair (a, b) is three bytes
//   [a & 0xff, (a >> 8 & 0xf) | (b & 0xf) << 4, b >> 4];
// an odd count is completed by the index 0, so n indices take 3·ceil(n / 2) bytes.
std::size_t packed_12bit_bytes(std::size_t count);
// out.size() must be packed_12bit_bytes(indices.size()); an index outside [0, 4096) throws naming
// its position and value.
void pack_12bit(Backend backend, std::span<const std::int64_t> indices, std::span<std::byte> out);
// The inverse. in.size() must be exactly packed_12bit_bytes(out.size()), every index below `limit`
// and an odd count's padding index 0; otherwise throws naming the first offender.
void unpack_12bit(Backend backend, std::span<const std::byte> in, std::uint64_t limit, std::span<std::int64_t> out);

// Codes of `bits` bits each (1 to 8), least significant bit first from bit 0 of byte 0, in
// ceil(n·bits / 8) bytes; the unused high bits of the last byte are zero.
std::size_t packed_code_bytes(std::size_t count, int bits);
// out.size() must be packed_code_bytes(codes.size(), bits); a code of more than `bits` bits throws.
void pack_codes(Backend backend, std::span<const std::uint8_t> codes, int bits, std::span<std::byte> out);
// The inverse. in.size() must be exactly packed_code_bytes(out.size(), bits), the padding bits zero
// and every code below `limit` (a codebook's size); otherwise throws naming the first offender.
void unpack_codes(Backend backend, std::span<const std::byte> in, int bits, unsigned limit,
                  std::span<std::uint8_t> out);

}  // namespace lowcomm::kernels
