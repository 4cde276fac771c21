// layernorm.hpp on the Cpu backend: the Reference's rows with `omp simd` reductions (vectorised
// partial sums), rows split between threads; the parameter gradients, which sum over rows, are
// reduced in a second pass with the columns split instead, so no two threads ever write one float
// and the row order of the sums is fixed (../layernorm_rows.hpp).
#include <omp.h>

#include <cstdint>

#include "../backend_kernels.hpp"
#include "../layernorm_rows.hpp"

namespace lowcomm::kernels::cpu_backend {

void layernorm_forward(std::span<float> out, std::span<float> mean, std::span<float> rstd,
                       std::span<const float> inp, std::span<const float> weight, std::span<const float> bias,
                       std::int64_t N, std::int64_t C, float eps) {
#pragma omp parallel for schedule(static)
  for (std::int64_t n = 0; n < N; ++n) {
    detail::forward_row<true>(out.data() + n * C, &mean[n], &rstd[n], inp.data() + n * C, weight.data(),
                              bias.data(), C, eps);
  }
}

void layernorm_backward(std::span<float> dinp, std::span<float> dweight, std::span<float> dbias,
                        std::span<const float> dout, std::span<const float> inp, std::span<const float> weight,
                        std::span<const float> mean, std::span<const float> rstd, std::int64_t N,
                        std::int64_t C) {
#pragma omp parallel
  {
#pragma omp for schedule(static)
    for (std::int64_t n = 0; n < N; ++n) {
      detail::backward_row<true>(dinp.data() + n * C, dout.data() + n * C, inp.data() + n * C, weight.data(),
                                 mean[n], rstd[n], C);
    }
    const std::int64_t threads = omp_get_num_threads();
    const std::int64_t id = omp_get_thread_num();
    detail::parameter_grads(dweight.data(), dbias.data(), dout.data(), inp.data(), mean.data(), rstd.data(), N,
                            C, C * id / threads, C * (id + 1) / threads);
  }
}

}  // namespace lowcomm::kernels::cpu_backend
