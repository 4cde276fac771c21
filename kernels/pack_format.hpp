#pragma once
// pack.hpp's index format on the host, shared by the dispatch (its error messages), the
// Reference and the Cpu backend.
#include <cstddef>
#include <cstdint>
#include <limits>

namespace lowcomm::kernels::detail {

// The largest index a width holds; I64 keeps the sign bit clear so indices stay int64.
inline std::uint64_t max_index(std::size_t bytes) {
  return bytes == 8 ? static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())
                    : (std::uint64_t{1} << (8 * bytes)) - 1;
}

inline bool fits(std::int64_t index, std::uint64_t max) {
  return index >= 0 && static_cast<std::uint64_t>(index) <= max;
}

inline bool valid(std::uint64_t index, std::uint64_t limit, std::uint64_t max) {
  return index < limit && index <= max;
}

// The little-endian index of `bytes` bytes at `in`, one byte at a time.
inline std::uint64_t load_reference(const std::byte* in, std::size_t bytes) {
  std::uint64_t value = 0;
  for (std::size_t b = 0; b < bytes; ++b) {
    value |= static_cast<std::uint64_t>(in[b]) << (8 * b);
  }
  return value;
}

}  // namespace lowcomm::kernels::detail
