// index_checks' definition: the values in order, up to the first outside the range.
#include "../backend_kernels.hpp"

namespace lowcomm::kernels::reference_backend {

namespace {

template <class T>
FirstOutside first_of(std::span<const T> values, std::int64_t limit) {
  for (std::size_t p = 0; p < values.size(); ++p) {
    if (values[p] < 0 || values[p] >= limit) return {p, values[p]};
  }
  return {values.size(), 0};
}

}  // namespace

FirstOutside first_outside(std::span<const std::int64_t> values, std::int64_t limit) {
  return first_of(values, limit);
}

FirstOutside first_outside_int32(std::span<const std::int32_t> values, std::int64_t limit) {
  return first_of(values, limit);
}

}  // namespace lowcomm::kernels::reference_backend
