#include "lowcomm/kernels/pack.hpp"

#include <limits>
#include <string_view>

#include <fmt/format.h>

#include "../pack_format.hpp"
#include "dispatch.hpp"
#include "index_checks.hpp"
#include "lowcomm/error.hpp"

namespace lowcomm::kernels {
namespace {

// The width's byte count, after checking that the enum holds one of its four values (a width
// may come from a message header cast to IndexWidth).
std::size_t width_bytes(std::string_view kernel, IndexWidth width) {
  switch (width) {
    case IndexWidth::U8:
    case IndexWidth::U16:
    case IndexWidth::U32:
    case IndexWidth::I64: return static_cast<std::size_t>(width);
  }
  throw Error(fmt::format("{}: invalid index width {} (must be 1, 2, 4 or 8 bytes)", kernel,
                          static_cast<int>(width)));
}

[[noreturn]] void throw_unfit(std::size_t position, std::int64_t index, std::size_t bytes) {
  throw Error(fmt::format("pack_indices: index {} at position {} does not fit in {} bytes "
                          "(must be in [0, {}])", index, position, bytes, detail::max_index(bytes)));
}

[[noreturn]] void throw_out_of_range(std::size_t position, std::uint64_t index,
                                     std::uint64_t limit) {
  throw Error(fmt::format("unpack_indices: malformed payload: index {} at position {} is not "
                          "below the limit {}", index, position, limit));
}

[[noreturn]] void throw_nan(std::size_t index) {
  throw Error(fmt::format("pack_signs: value {} is NaN, which has no sign to send", index));
}

// The bits of the last byte that no value uses must be zero in a well-formed payload.
void check_padding(std::string_view kernel, std::span<const std::byte> in, std::size_t used_bits) {
  const std::size_t used = used_bits % 8;
  if (used == 0 || in.empty()) return;
  const auto last = std::to_integer<unsigned>(in.back());
  if ((last >> used) != 0) {
    throw Error(fmt::format("{}: malformed payload: padding bits of the last byte are "
                            "set (byte 0x{:02x}, {} of its bits used)", kernel, last, used));
  }
}

void check_code_bits(std::string_view kernel, int bits) {
  if (bits < 1 || bits > 8) throw Error(fmt::format("{}: codes of {} bits (must be 1 to 8)", kernel, bits));
}

}  // namespace

IndexWidth smallest_index_width(std::uint64_t limit) {
  if (limit <= (std::uint64_t{1} << 8)) return IndexWidth::U8;
  if (limit <= (std::uint64_t{1} << 16)) return IndexWidth::U16;
  if (limit <= (std::uint64_t{1} << 32)) return IndexWidth::U32;
  return IndexWidth::I64;
}

std::size_t packed_index_bytes(std::size_t count, IndexWidth width) {
  const std::size_t bytes = width_bytes("packed_index_bytes", width);
  if (count > std::numeric_limits<std::size_t>::max() / bytes) {
    throw Error(fmt::format("packed_index_bytes: {} indices of {} bytes overflow size_t", count,
                            bytes));
  }
  return count * bytes;
}

void pack_indices(Backend backend, std::span<const std::int64_t> indices, IndexWidth width,
                  std::span<std::byte> out) {
  const std::size_t bytes = width_bytes("pack_indices", width);
  if (out.size() != packed_index_bytes(indices.size(), width)) {
    throw Error(fmt::format("pack_indices: output holds {} bytes, {} indices of {} bytes need {}",
                            out.size(), indices.size(), bytes, indices.size() * bytes));
  }
  if (const std::size_t bad = LOWCOMM_DISPATCH(backend, pack_indices, indices, bytes, out); bad < indices.size()) {
    // The culprit's value, read by the backend where the indices live (each is outside [0, 0)).
    throw_unfit(bad, detail::first_outside(backend, "pack_indices", indices.subspan(bad, 1), 0).value, bytes);
  }
}

void unpack_indices(Backend backend, std::span<const std::byte> in, IndexWidth width,
                    std::uint64_t limit, std::span<std::int64_t> out) {
  const std::size_t bytes = width_bytes("unpack_indices", width);
  if (in.size() != packed_index_bytes(out.size(), width)) {
    throw Error(fmt::format("unpack_indices: malformed payload: {} bytes, {} indices of {} bytes "
                            "need exactly {}", in.size(), out.size(), bytes, out.size() * bytes));
  }
  if (const std::size_t bad = LOWCOMM_DISPATCH(backend, unpack_indices, in, bytes, limit, out); bad < out.size()) {
    throw_out_of_range(bad, detail::load_reference(&in[bad * bytes], bytes), limit);
  }
}

std::size_t packed_sign_bytes(std::size_t count) { return count / 8 + (count % 8 != 0); }

void pack_signs(Backend backend, std::span<const float> values, std::span<std::byte> out) {
  if (out.size() != packed_sign_bytes(values.size())) {
    throw Error(fmt::format("pack_signs: output holds {} bytes, {} values need {}", out.size(),
                            values.size(), packed_sign_bytes(values.size())));
  }
  if (const std::size_t nan = LOWCOMM_DISPATCH(backend, pack_signs, values, out); nan < values.size()) {
    throw_nan(nan);
  }
}

void unpack_signs(Backend backend, std::span<const std::byte> in, std::span<float> out) {
  if (in.size() != packed_sign_bytes(out.size())) {
    throw Error(fmt::format("unpack_signs: malformed payload: {} bytes, {} values need exactly {}",
                            in.size(), out.size(), packed_sign_bytes(out.size())));
  }
  check_padding("unpack_signs", in, out.size());
  LOWCOMM_DISPATCH(backend, unpack_signs, in, out);
}

std::size_t packed_12bit_bytes(std::size_t count) {
  if (count / 2 + 1 > std::numeric_limits<std::size_t>::max() / 3) {
    throw Error(fmt::format("packed_12bit_bytes: {} indices overflow size_t", count));
  }
  return 3 * (count / 2 + count % 2);
}

void pack_12bit(Backend backend, std::span<const std::int64_t> indices, std::span<std::byte> out) {
  if (out.size() != packed_12bit_bytes(indices.size())) {
    throw Error(fmt::format("pack_12bit: output holds {} bytes, {} indices need {}", out.size(), indices.size(),
                            packed_12bit_bytes(indices.size())));
  }
  if (const std::size_t bad = LOWCOMM_DISPATCH(backend, pack_12bit, indices, out); bad < indices.size()) {
    const std::int64_t index = detail::first_outside(backend, "pack_12bit", indices.subspan(bad, 1), 0).value;
    throw Error(fmt::format("pack_12bit: index {} at position {} does not fit in 12 bits (must be in [0, {}))", index,
                            bad, detail::kPacked12Limit));
  }
}

void unpack_12bit(Backend backend, std::span<const std::byte> in, std::uint64_t limit, std::span<std::int64_t> out) {
  if (in.size() != packed_12bit_bytes(out.size())) {
    throw Error(fmt::format("unpack_12bit: malformed payload: {} bytes, {} indices need exactly {}", in.size(),
                            out.size(), packed_12bit_bytes(out.size())));
  }
  // An odd count's last pair is completed by index 0: anything else was not made by pack_12bit.
  if (out.size() % 2 == 1 && detail::load_12bit(in, out.size()) != 0) {
    throw Error(fmt::format("unpack_12bit: malformed payload: the padding index after the last of {} is {}, not 0",
                            out.size(), detail::load_12bit(in, out.size())));
  }
  if (const std::size_t bad = LOWCOMM_DISPATCH(backend, unpack_12bit, in, limit, out); bad < out.size()) {
    throw Error(fmt::format("unpack_12bit: malformed payload: index {} at position {} is not below the limit {}",
                            detail::load_12bit(in, bad), bad, limit));
  }
}

std::size_t packed_code_bytes(std::size_t count, int bits) {
  check_code_bits("packed_code_bytes", bits);
  if (count > std::numeric_limits<std::size_t>::max() / 8) {
    throw Error(fmt::format("packed_code_bytes: {} codes overflow size_t", count));
  }
  return (count * static_cast<std::size_t>(bits) + 7) / 8;
}

void pack_codes(Backend backend, std::span<const std::uint8_t> codes, int bits, std::span<std::byte> out) {
  if (out.size() != packed_code_bytes(codes.size(), bits)) {
    throw Error(fmt::format("pack_codes: output holds {} bytes, {} codes of {} bits need {}", out.size(),
                            codes.size(), bits, packed_code_bytes(codes.size(), bits)));
  }
  if (const std::size_t bad = LOWCOMM_DISPATCH(backend, pack_codes, codes, bits, out); bad < codes.size()) {
    throw Error(fmt::format("pack_codes: the code at position {} does not fit in {} bits", bad, bits));
  }
}

void unpack_codes(Backend backend, std::span<const std::byte> in, int bits, unsigned limit,
                  std::span<std::uint8_t> out) {
  if (in.size() != packed_code_bytes(out.size(), bits)) {
    throw Error(fmt::format("unpack_codes: malformed payload: {} bytes, {} codes of {} bits need exactly {}",
                            in.size(), out.size(), bits, packed_code_bytes(out.size(), bits)));
  }
  check_padding("unpack_codes", in, out.size() * static_cast<std::size_t>(bits));
  if (const std::size_t bad = LOWCOMM_DISPATCH(backend, unpack_codes, in, bits, limit, out); bad < out.size()) {
    throw Error(fmt::format("unpack_codes: malformed payload: code {} at position {} is not below {}",
                            detail::load_code(in, bits, bad), bad, limit));
  }
}

}  // namespace lowcomm::kernels
