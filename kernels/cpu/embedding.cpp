// embedding.hpp on the Cpu backend: threads over rows forward; backward each thread adds every
// contribution to its own columns, in the Reference's (b, t) order, so the bits are the
// Reference's (../embedding_rows.hpp).
#include <omp.h>

#include <cstdint>

#include "../backend_kernels.hpp"
#include "../embedding_rows.hpp"

namespace lowcomm::kernels::cpu_backend {

void embedding_forward(std::span<float> out, std::span<const std::int32_t> tokens, std::span<const float> wte,
                       std::span<const float> wpe, std::int64_t B, std::int64_t T, std::int64_t C,
                       std::int64_t /*V*/) {
#pragma omp parallel for schedule(static)
  for (std::int64_t bt = 0; bt < B * T; ++bt) detail::embedding_row(out, tokens, wte, wpe, bt, T, C);
}

void embedding_backward(std::span<float> dwte, std::span<float> dwpe, std::span<const float> dout,
                        std::span<const std::int32_t> tokens, std::int64_t B, std::int64_t T, std::int64_t C,
                        std::int64_t /*V*/) {
#pragma omp parallel
  {
    const std::int64_t threads = omp_get_num_threads();
    const std::int64_t id = omp_get_thread_num();
    detail::embedding_columns(dwte, dwpe, dout, tokens, B, T, C, C * id / threads, C * (id + 1) / threads);
  }
}

}  // namespace lowcomm::kernels::cpu_backend
