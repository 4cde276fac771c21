// optimizer_updates.hpp's definition: each element's rule (../optimizer_update_rules.hpp), in order.
#include <cstddef>

#include "../backend_kernels.hpp"
#include "../optimizer_update_rules.hpp"

namespace lowcomm::kernels::reference_backend {

void adamw_update(const AdamWScalars& s, std::span<float> param, std::span<const float> grad,
                  std::span<float> exp_avg, std::span<float> exp_avg_sq) {
  for (std::size_t j = 0; j < param.size(); ++j) {
    adamw_element(s, param[j], grad[j], exp_avg[j], exp_avg_sq[j]);
  }
}

void sgd_update(const SgdScalars& s, std::span<float> param, std::span<const float> grad, std::span<float> buffer) {
  for (std::size_t j = 0; j < param.size(); ++j) {
    sgd_element(s, param[j], grad[j], s.momentum ? &buffer[j] : nullptr);
  }
}

void signum_update(const SignumScalars& s, std::span<float> param, std::span<const float> grad,
                   std::span<float> momentum) {
  for (std::size_t j = 0; j < param.size(); ++j) signum_element(s, param[j], grad[j], momentum[j]);
}

}  // namespace lowcomm::kernels::reference_backend
