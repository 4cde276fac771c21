#pragma once
// topk.hpp's selection order on the host, shared by the Reference and the Cpu backend (the
// accelerator backends spell the same key in their device code).
#include <algorithm>
#include <bit>
#include <cstdint>
#include <span>

namespace lowcomm::kernels::detail {

// The selection order as an integer: the bits of |v| order like the magnitudes themselves
// (+0 and -0 both become 0), and every NaN, whatever its sign and payload, becomes the one
// key just above +inf's, so NaNs tie among themselves and beat every number.
// (min() rather than a branch, so that loops over keys vectorise.)
constexpr std::uint32_t kNanKey = 0x7F800001u;  // +inf's bits + 1
inline std::uint32_t magnitude_key(float v) {
  return std::min(std::bit_cast<std::uint32_t>(v) & 0x7FFFFFFFu, kNanKey);
}

struct Candidate {
  std::uint32_t key;
  std::int64_t index;
};

// True when a is selected before b: larger magnitude first, then lower index. (An object, not a
// function, so that the sorts inline it.)
constexpr auto comes_before = [](const Candidate& a, const Candidate& b) {
  return a.key > b.key || (a.key == b.key && a.index < b.index);
};

inline void write_selection(std::span<const float> values, std::span<const Candidate> chosen,
                     std::int64_t* indices, float* selected) {
  for (std::size_t j = 0; j < chosen.size(); ++j) {
    indices[j] = chosen[j].index;
    selected[j] = values[static_cast<std::size_t>(chosen[j].index)];
  }
}

}  // namespace lowcomm::kernels::detail
