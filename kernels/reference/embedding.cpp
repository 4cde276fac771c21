// embedding.hpp's definition: each row in order forward; every contribution added in (b, t)
// order backward (../embedding_rows.hpp).
#include <cstdint>

#include "../backend_kernels.hpp"
#include "../embedding_rows.hpp"

namespace lowcomm::kernels::reference_backend {

void embedding_forward(std::span<float> out, std::span<const std::int32_t> tokens, std::span<const float> wte,
                       std::span<const float> wpe, std::int64_t B, std::int64_t T, std::int64_t C,
                       std::int64_t /*V*/) {
  for (std::int64_t bt = 0; bt < B * T; ++bt) detail::embedding_row(out, tokens, wte, wpe, bt, T, C);
}

void embedding_backward(std::span<float> dwte, std::span<float> dwpe, std::span<const float> dout,
                        std::span<const std::int32_t> tokens, std::int64_t B, std::int64_t T, std::int64_t C,
                        std::int64_t /*V*/) {
  detail::embedding_columns(dwte, dwpe, dout, tokens, B, T, C, 0, C);
}

}  // namespace lowcomm::kernels::reference_backend
