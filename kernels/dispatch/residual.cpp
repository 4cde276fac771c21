// Residual add (include/lowcomm/kernels/residual.hpp): the sizes checked here, the sum computed by
// each backend.
#include "lowcomm/kernels/residual.hpp"

#include <cstdint>

#include "dispatch.hpp"
#include "transformer_checks.hpp"

namespace lowcomm::kernels {

void residual_add(Backend backend, std::span<float> out, std::span<const float> a,
                  std::span<const float> b) {
  const auto n = static_cast<std::int64_t>(out.size());
  detail::check_size("residual_add", "a", a.size(), n);
  detail::check_size("residual_add", "b", b.size(), n);
  LOWCOMM_DISPATCH(backend, residual_add, out, a, b);
}

}  // namespace lowcomm::kernels
