// layernorm.hpp's definition: the textbook formulas in float, index order (../layernorm_rows.hpp).
#include <cstdint>

#include "../backend_kernels.hpp"
#include "../layernorm_rows.hpp"

namespace lowcomm::kernels::reference_backend {

void layernorm_forward(std::span<float> out, std::span<float> mean, std::span<float> rstd,
                       std::span<const float> inp, std::span<const float> weight, std::span<const float> bias,
                       std::int64_t N, std::int64_t C, float eps) {
  for (std::int64_t n = 0; n < N; ++n) {
    detail::forward_row<false>(out.data() + n * C, &mean[n], &rstd[n], inp.data() + n * C, weight.data(),
                               bias.data(), C, eps);
  }
}

void layernorm_backward(std::span<float> dinp, std::span<float> dweight, std::span<float> dbias,
                        std::span<const float> dout, std::span<const float> inp, std::span<const float> weight,
                        std::span<const float> mean, std::span<const float> rstd, std::int64_t N,
                        std::int64_t C) {
  for (std::int64_t n = 0; n < N; ++n) {
    detail::backward_row<false>(dinp.data() + n * C, dout.data() + n * C, inp.data() + n * C, weight.data(),
                                mean[n], rstd[n], C);
  }
  detail::parameter_grads(dweight.data(), dbias.data(), dout.data(), inp.data(), mean.data(), rstd.data(), N,
                          C, 0, C);
}

}  // namespace lowcomm::kernels::reference_backend
