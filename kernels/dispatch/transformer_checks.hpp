#pragma once
// Argument checks shared by the transformer kernels (private to kernels/dispatch): every size is
// checked against the dimensions before a loop reads a span, so a wrong buffer throws
// lowcomm::Error naming the kernel and the argument instead of reading out of bounds.
#include <cstdint>
#include <limits>
#include <string_view>

#include <fmt/format.h>

#include "lowcomm/error.hpp"

namespace lowcomm::kernels::detail {

inline void check_dims(std::string_view kernel, std::initializer_list<std::int64_t> dims) {
  for (std::int64_t d : dims) {
    if (d < 0) throw Error(fmt::format("{}: dimensions must be ≥ 0, got {}", kernel, d));
  }
}

// a · b, throwing where it would overflow.
inline std::int64_t product(std::string_view kernel, std::int64_t a, std::int64_t b) {
  if (b != 0 && a > std::numeric_limits<std::int64_t>::max() / b) {
    throw Error(fmt::format("{}: {} × {} overflows", kernel, a, b));
  }
  return a * b;
}

inline void check_size(std::string_view kernel, std::string_view name, std::size_t size,
                       std::int64_t expected, std::string_view unit = "floats") {
  if (size != static_cast<std::uint64_t>(expected)) {
    throw Error(fmt::format("{}: {} holds {} {}, expected {}", kernel, name, size, unit, expected));
  }
}

}  // namespace lowcomm::kernels::detail
