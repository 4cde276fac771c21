#include "index_checks.hpp"

#include <array>

#include "../absent.hpp"
#include "dispatch.hpp"

namespace lowcomm::kernels::detail {

namespace {

// Refuses a backend this build lacks in `kernel`'s name. Whether it is built is fixed once the
// library's statics have run (absent.hpp's registry), so it is asked once per backend.
void require_built(Backend backend, std::string_view kernel) {
  static const std::array<bool, 4> built = {in_this_build(Backend::Reference), in_this_build(Backend::Cpu),
                                            in_this_build(Backend::Kokkos), in_this_build(Backend::Cuda)};
  const auto index = static_cast<std::size_t>(backend);
  if (index < built.size() && !built[index]) absent(kernel, backend);
}

}  // namespace

FirstOutside first_outside(Backend backend, std::string_view kernel, std::span<const std::int64_t> values,
                           std::int64_t limit) {
  require_built(backend, kernel);
  return LOWCOMM_DISPATCH(backend, first_outside, values, limit);
}

FirstOutside first_outside(Backend backend, std::string_view kernel, std::span<const std::int32_t> values,
                           std::int64_t limit) {
  require_built(backend, kernel);
  return LOWCOMM_DISPATCH(backend, first_outside_int32, values, limit);
}

}  // namespace lowcomm::kernels::detail
