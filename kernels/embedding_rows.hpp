#pragma once
// embedding.hpp's loops on the host, shared by the Reference (in order) and the Cpu backend
// (threads over rows forward, over columns backward). The dispatch has checked the sizes and
// every token.
#include <cstdint>
#include <span>

namespace lowcomm::kernels::detail {

// out row bt = wte row tokens[bt] + wpe row bt mod T.
inline void embedding_row(std::span<float> out, std::span<const std::int32_t> tokens, std::span<const float> wte,
                          std::span<const float> wpe, std::int64_t bt, std::int64_t T, std::int64_t C) {
  const float* e = wte.data() + tokens[bt] * C;
  const float* p = wpe.data() + (bt % T) * C;
  float* o = out.data() + bt * C;
  for (std::int64_t c = 0; c < C; ++c) o[c] = e[c] + p[c];
}

// Columns [c0, c1) of every contribution, added in (b, t) order.
inline void embedding_columns(std::span<float> dwte, std::span<float> dwpe, std::span<const float> dout,
                              std::span<const std::int32_t> tokens, std::int64_t B, std::int64_t T,
                              std::int64_t C, std::int64_t c0, std::int64_t c1) {
  for (std::int64_t bt = 0; bt < B * T; ++bt) {
    const float* d = dout.data() + bt * C;
    float* e = dwte.data() + tokens[bt] * C;
    float* p = dwpe.data() + (bt % T) * C;
    for (std::int64_t c = c0; c < c1; ++c) {
      e[c] += d[c];
      p[c] += d[c];
    }
  }
}

}  // namespace lowcomm::kernels::detail
