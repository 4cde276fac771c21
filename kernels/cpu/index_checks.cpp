// index_checks on the CPU: a branch-free pass that vectorises (the common case: every value
// inside), and only on a failure the search for the first culprit.
#include <algorithm>

#include "../backend_kernels.hpp"

namespace lowcomm::kernels::cpu_backend {

namespace {

template <class T>
FirstOutside first_of(std::span<const T> values, std::int64_t limit) {
  bool any_outside = false;
  for (const T value : values) any_outside |= value < 0 || value >= limit;
  if (!any_outside) return {values.size(), 0};
  const auto outside = std::find_if(values.begin(), values.end(), [&](T value) { return value < 0 || value >= limit; });
  return {static_cast<std::size_t>(outside - values.begin()), *outside};
}

}  // namespace

FirstOutside first_outside(std::span<const std::int64_t> values, std::int64_t limit) {
  return first_of(values, limit);
}

FirstOutside first_outside_int32(std::span<const std::int32_t> values, std::int64_t limit) {
  return first_of(values, limit);
}

}  // namespace lowcomm::kernels::cpu_backend
