#include "lowcomm/compress/index_encoding.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "lowcomm/error.hpp"
#include "lowcomm/kernels/pack.hpp"

namespace lowcomm {

namespace {

using Kind = IndexEncoding::Kind;

constexpr Kind kKinds[] = {Kind::Int64, Kind::Int32, Kind::Smallest, Kind::Packed12};
constexpr std::uint64_t kPacked12Limit = 4096;
constexpr std::uint64_t kInt32Limit = std::uint64_t{1} << 32;

kernels::IndexWidth width_of(Kind kind, std::uint64_t limit) {
  switch (kind) {
    case Kind::Int64: return kernels::IndexWidth::I64;
    case Kind::Int32: return kernels::IndexWidth::U32;
    default: return kernels::smallest_index_width(limit);
  }
}

}  // namespace

const std::vector<std::string>& IndexEncoding::names() {
  static const std::vector<std::string> all = {"int64", "int32", "smallest", "packed12"};
  return all;
}

std::string_view IndexEncoding::name() const {
  for (std::size_t i = 0; i < std::size(kKinds); ++i) {
    if (kKinds[i] == kind) return names()[i];
  }
  return "?";
}

IndexEncoding IndexEncoding::parse(std::string_view name) {
  for (std::size_t i = 0; i < std::size(kKinds); ++i) {
    if (names()[i] == name) return {.kind = kKinds[i]};
  }
  throw ConfigError(fmt::format("index_width \"{}\" is not one of {}", name, fmt::join(names(), ", ")));
}

std::size_t IndexEncoding::bytes(std::size_t count, std::uint64_t limit) const {
  if (kind == Kind::Packed12) {
    if (limit > kPacked12Limit) {
      throw Error(fmt::format("index_width = packed12 holds indices below {}, but {} entries are addressed: set "
                              "index_width = smallest, or make the units (or blocks) smaller",
                              kPacked12Limit, limit));
    }
    return kernels::packed_12bit_bytes(count);
  }
  if (kind == Kind::Int32 && limit > kInt32Limit) {
    throw Error(fmt::format("index_width = int32 holds indices below 2^32, but {} entries are addressed: set "
                            "index_width = smallest or int64", limit));
  }
  return kernels::packed_index_bytes(count, width_of(kind, limit));
}

void IndexEncoding::pack(kernels::Backend backend, std::span<const std::int64_t> indices, std::uint64_t limit,
                         std::span<std::byte> out) const {
  bytes(indices.size(), limit);  // the limit's check
  if (kind == Kind::Packed12) {
    kernels::pack_12bit(backend, indices, out);
  } else {
    kernels::pack_indices(backend, indices, width_of(kind, limit), out);
  }
}

void IndexEncoding::unpack(kernels::Backend backend, std::span<const std::byte> in, std::uint64_t limit,
                           std::span<std::int64_t> out) const {
  bytes(out.size(), limit);  // the limit's check
  if (kind == Kind::Packed12) {
    kernels::unpack_12bit(backend, in, limit, out);
  } else {
    kernels::unpack_indices(backend, in, width_of(kind, limit), limit, out);
  }
}

}  // namespace lowcomm
