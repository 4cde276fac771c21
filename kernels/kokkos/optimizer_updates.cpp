// optimizer_updates.hpp's updates, one element per work item, each the Reference's rule
// (../optimizer_update_rules.hpp). The tensors are updated in place: in a space that cannot read
// host memory they would be copied to the device and back for each call (kokkos_views.hpp): they
// are the optimizers' host-memory state, so there each update runs the Cpu loops instead (the
// same bits).
#include <Kokkos_Core.hpp>

#include "../optimizer_update_rules.hpp"
#include "kokkos_views.hpp"

namespace lowcomm::kernels::kokkos_backend {

void adamw_update(const AdamWScalars& s, std::span<float> param, std::span<const float> grad,
                  std::span<float> exp_avg, std::span<float> exp_avg_sq) {
  if (!reads_host_memory()) return cpu_backend::adamw_update(s, param, grad, exp_avg, exp_avg_sq);
  const auto g = input(grad);
  Output<float> p_out(param, true), m_out(exp_avg, true), v_out(exp_avg_sq, true);
  const auto p = p_out.view(), m = m_out.view(), v = v_out.view();
  Kokkos::parallel_for("lowcomm::adamw_update", Range(0, static_cast<std::int64_t>(param.size())),
                       KOKKOS_LAMBDA(const std::int64_t i) { adamw_element(s, p(i), g(i), m(i), v(i)); });
  p_out.finish();
  m_out.finish();
  v_out.finish();
}

void sgd_update(const SgdScalars& s, std::span<float> param, std::span<const float> grad, std::span<float> buffer) {
  if (!reads_host_memory()) return cpu_backend::sgd_update(s, param, grad, buffer);
  const auto g = input(grad);
  Output<float> p_out(param, true), b_out(buffer, true);
  const auto p = p_out.view(), b = b_out.view();
  Kokkos::parallel_for("lowcomm::sgd_update", Range(0, static_cast<std::int64_t>(param.size())),
                       KOKKOS_LAMBDA(const std::int64_t i) {
                         sgd_element(s, p(i), g(i), s.momentum ? &b(i) : nullptr);
                       });
  p_out.finish();
  b_out.finish();
}

void signum_update(const SignumScalars& s, std::span<float> param, std::span<const float> grad,
                   std::span<float> momentum) {
  if (!reads_host_memory()) return cpu_backend::signum_update(s, param, grad, momentum);
  const auto g = input(grad);
  Output<float> p_out(param, true), m_out(momentum, true);
  const auto p = p_out.view(), m = m_out.view();
  Kokkos::parallel_for("lowcomm::signum_update", Range(0, static_cast<std::int64_t>(param.size())),
                       KOKKOS_LAMBDA(const std::int64_t i) { signum_element(s, p(i), g(i), m(i)); });
  p_out.finish();
  m_out.finish();
}

}  // namespace lowcomm::kernels::kokkos_backend
