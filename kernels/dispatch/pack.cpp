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
void check_padding(std::span<const std::byte> in, std::size_t count) {
  const std::size_t used = count % 8;
  if (used == 0) return;
  const auto last = std::to_integer<unsigned>(in.back());
  if ((last >> used) != 0) {
    throw Error(fmt::format("unpack_signs: malformed payload: padding bits of the last byte are "
                            "set (byte 0x{:02x}, {} of its bits used)", last, used));
  }
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
  check_padding(in, out.size());
  LOWCOMM_DISPATCH(backend, unpack_signs, in, out);
}

}  // namespace lowcomm::kernels
