// index_checks as a min reduction over the positions of the values outside the range, in the
// default execution space. The spans this backend takes are host memory (kokkos_views.hpp), so
// the culprit's value is read from the span.
#include <Kokkos_Core.hpp>

#include "kokkos_views.hpp"

namespace lowcomm::kernels::kokkos_backend {

namespace {

template <class T>
FirstOutside first_of(std::span<const T> values, std::int64_t limit) {
  const auto n = static_cast<std::int64_t>(values.size());
  const auto in = input(values);
  std::int64_t first = n;
  Kokkos::parallel_reduce(
      "lowcomm::first_outside", Range(0, n),
      KOKKOS_LAMBDA(const std::int64_t p, std::int64_t& found) {
        const auto value = static_cast<std::int64_t>(in(p));
        if (value < 0 || value >= limit) found = smaller(found, p);
      },
      Kokkos::Min<std::int64_t>(first));
  const auto position = static_cast<std::size_t>(smaller(first, n));  // Min's identity is the largest int64
  return {position, position < values.size() ? static_cast<std::int64_t>(values[position]) : 0};
}

}  // namespace

FirstOutside first_outside(std::span<const std::int64_t> values, std::int64_t limit) {
  return first_of(values, limit);
}

FirstOutside first_outside_int32(std::span<const std::int32_t> values, std::int64_t limit) {
  return first_of(values, limit);
}

}  // namespace lowcomm::kernels::kokkos_backend
