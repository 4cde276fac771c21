#pragma once
// How a sparse compressor's indices travel: one choice shared by topk and dct_topk (their key
// `index_width`) and used by sparseloco, each counted exactly on the wire. Every index is below a
// limit the compressor knows (its unit's size, or its block's); for count indices a payload holds:
//   int64     8·count bytes (DeMo's reference implementation)
//   int32     4·count bytes (unsigned: limits up to 2^32)
//   smallest  the smallest unsigned type that holds every index below the limit: 1, 2, 4 or 8
//             bytes each (Psyche's compact format)
//   packed12  12 bits each, two indices in three bytes: 3·ceil(count / 2) bytes (SparseLoCo's);
//             only for limits up to 4096 (a block of 64 × 64)
// An index the encoding cannot hold, or a received one at or past the limit, throws
// lowcomm::Error naming it.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lowcomm/kernels/backend_name.hpp"

namespace lowcomm {

struct IndexEncoding {
  enum class Kind { Int64, Int32, Smallest, Packed12 };
  Kind kind = Kind::Int32;

  // From the names above; throws lowcomm::ConfigError for another.
  static IndexEncoding parse(std::string_view name);
  static const std::vector<std::string>& names();
  std::string_view name() const;

  // Throws lowcomm::Error where the encoding cannot address `limit` entries (packed12 past 4096,
  // int32 past 2^32), saying what to set instead.
  std::size_t bytes(std::size_t count, std::uint64_t limit) const;
  void pack(kernels::Backend backend, std::span<const std::int64_t> indices, std::uint64_t limit,
            std::span<std::byte> out) const;
  void unpack(kernels::Backend backend, std::span<const std::byte> in, std::uint64_t limit,
              std::span<std::int64_t> out) const;
};

}  // namespace lowcomm
