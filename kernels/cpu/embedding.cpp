// Token + position embedding (include/lowcomm/kernels/embedding.hpp).
#include "lowcomm/kernels/embedding.hpp"

#include <omp.h>

#include <algorithm>

#include "transformer_checks.hpp"
#if LOWCOMM_HAVE_CUDA
#include "../cuda/cuda_model_kernels.hpp"
#endif

namespace lowcomm::kernels {
namespace {

void check(std::string_view kernel, std::size_t out, std::span<const std::int32_t> tokens,
           std::size_t wte, std::size_t wpe, std::int64_t B, std::int64_t T, std::int64_t C,
           std::int64_t V) {
  detail::check_dims(kernel, {B, T, C, V});
  const std::int64_t positions = detail::product(kernel, B, T);
  detail::check_size(kernel, "tokens (B·T)", tokens.size(), positions);
  detail::check_size(kernel, "out (B·T × C)", out, detail::product(kernel, positions, C));
  detail::check_size(kernel, "wte (V × C)", wte, detail::product(kernel, V, C));
  if (wpe % static_cast<std::uint64_t>(std::max<std::int64_t>(C, 1)) != 0 ||
      wpe < static_cast<std::uint64_t>(detail::product(kernel, T, C))) {
    throw Error(fmt::format("{}: wpe holds {} floats, expected rows of C = {} and at least T = {} of them",
                            kernel, wpe, C, T));
  }
  for (std::int64_t i = 0; i < positions; ++i) {
    if (tokens[i] < 0 || tokens[i] >= V) {
      throw Error(fmt::format("{}: token {} at position {} (sequence {}, offset {}) is outside the "
                              "vocabulary [0, {})", kernel, tokens[i], i, i / std::max<std::int64_t>(T, 1),
                              i % std::max<std::int64_t>(T, 1), V));
    }
  }
}

}  // namespace

void embedding_forward(Backend backend, std::span<float> out, std::span<const std::int32_t> tokens,
                       std::span<const float> wte, std::span<const float> wpe, std::int64_t B,
                       std::int64_t T, std::int64_t C, std::int64_t V) {
  check("embedding_forward", out.size(), tokens, wte.size(), wpe.size(), B, T, C, V);
  auto row = [&](std::int64_t bt) {
    const float* e = wte.data() + tokens[bt] * C;
    const float* p = wpe.data() + (bt % T) * C;
    float* o = out.data() + bt * C;
    for (std::int64_t c = 0; c < C; ++c) o[c] = e[c] + p[c];
  };
  switch (backend) {
    case Backend::Reference:
      for (std::int64_t bt = 0; bt < B * T; ++bt) row(bt);
      return;
    case Backend::Cpu:
#pragma omp parallel for schedule(static)
      for (std::int64_t bt = 0; bt < B * T; ++bt) row(bt);
      return;
    case Backend::Kokkos: break;
    case Backend::Cuda:
#if LOWCOMM_HAVE_CUDA
      return cuda_backend::embedding_forward(out, tokens, wte, wpe, B, T, C, V);
#endif
      break;
  }
  unsupported("embedding_forward", backend);
}

void embedding_backward(Backend backend, std::span<float> dwte, std::span<float> dwpe,
                        std::span<const float> dout, std::span<const std::int32_t> tokens,
                        std::int64_t B, std::int64_t T, std::int64_t C, std::int64_t V) {
  check("embedding_backward", dout.size(), tokens, dwte.size(), dwpe.size(), B, T, C, V);
  // Columns [c0, c1) of every contribution, added in (b, t) order.
  auto columns = [&](std::int64_t c0, std::int64_t c1) {
    for (std::int64_t bt = 0; bt < B * T; ++bt) {
      const float* d = dout.data() + bt * C;
      float* e = dwte.data() + tokens[bt] * C;
      float* p = dwpe.data() + (bt % T) * C;
      for (std::int64_t c = c0; c < c1; ++c) {
        e[c] += d[c];
        p[c] += d[c];
      }
    }
  };
  switch (backend) {
    case Backend::Reference: return columns(0, C);
    case Backend::Cpu:
#pragma omp parallel
    {
      const std::int64_t threads = omp_get_num_threads();
      const std::int64_t id = omp_get_thread_num();
      columns(C * id / threads, C * (id + 1) / threads);
    }
      return;
    case Backend::Kokkos: break;
    case Backend::Cuda:
#if LOWCOMM_HAVE_CUDA
      return cuda_backend::embedding_backward(dwte, dwpe, dout, tokens, B, T, C, V);
#endif
      break;
  }
  unsupported("embedding_backward", backend);
}

}  // namespace lowcomm::kernels
