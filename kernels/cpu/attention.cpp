// Causal multi-head self-attention (include/lowcomm/kernels/attention.hpp). One query row at a
// time, as llm.c: at GPT-2's short training contexts the T × T scores are small, so the time is in
// the projections around this kernel, and plain loops with vectorised head-size inner loops are
// enough. The score scale 1/sqrt(hs) is applied to the dot product, as PyTorch's (q @ kᵀ) · scale.
// One template per kernel serves qkv and att stored as fp32 or as bf16 (../stored_values.hpp).
#include "lowcomm/kernels/attention.hpp"

#include <cmath>
#include <type_traits>
#include <vector>

#include "../stored_values.hpp"
#include "transformer_checks.hpp"
#if LOWCOMM_HAVE_CUDA
#include "../cuda/cuda_model_kernels.hpp"
#endif

namespace lowcomm::kernels {
namespace {

struct Shape {
  std::int64_t B, T, C, H, hs;
};

Shape check(std::string_view kernel, std::int64_t B, std::int64_t T, std::int64_t C,
            std::int64_t H, std::size_t qkv, std::size_t out, std::size_t att,
            std::string_view out_name) {
  detail::check_dims(kernel, {B, T, C, H});
  if (H == 0 || C % H != 0) {
    throw Error(fmt::format("{}: width C = {} must be a positive multiple of the heads H = {}",
                            kernel, C, H));
  }
  const std::int64_t rows = detail::product(kernel, B, T);
  detail::check_size(kernel, "qkv (B·T × 3C)", qkv, detail::product(kernel, rows, 3 * C));
  detail::check_size(kernel, out_name, out, detail::product(kernel, rows, C));
  detail::check_size(kernel, "att (B·H·T·T)", att,
                     detail::product(kernel, detail::product(kernel, B, H), detail::product(kernel, T, T)));
  return {B, T, C, H, C / H};
}

template <bool Vectorised, class X, class Y>
inline float dot(const X* a, const Y* b, std::int64_t n) {
  float sum = 0.0f;
  if constexpr (Vectorised) {
#pragma omp simd reduction(+ : sum)
    for (std::int64_t i = 0; i < n; ++i) sum += detail::widened(a[i]) * detail::widened(b[i]);
  } else {
    for (std::int64_t i = 0; i < n; ++i) sum += detail::widened(a[i]) * detail::widened(b[i]);
  }
  return sum;
}

// Where a query row's scores are computed: att's row itself when att is fp32; when it is bf16,
// a row of fp32 kept by each thread (grown to the longest T seen), so the softmax runs in fp32
// and only its result is rounded.
template <class Stored>
float* scores_row(Stored* att_row, std::int64_t T) {
  if constexpr (std::is_same_v<Stored, float>) {
    return att_row;
  } else {
    thread_local std::vector<float> row;
    if (row.size() < static_cast<std::size_t>(T)) row.resize(static_cast<std::size_t>(T));
    return row.data();
  }
}

// Query row t of head h in sequence b. qkv and att are fp32 or bf16 (../stored_values.hpp); the
// weights of v are att's stored values.
template <bool Vectorised, class Stored>
void forward_row(const Shape& s, float* out, Stored* att, const Stored* qkv, std::int64_t b,
                 std::int64_t h, std::int64_t t) {
  const std::int64_t C3 = 3 * s.C;
  const float scale = 1.0f / std::sqrt(static_cast<float>(s.hs));
  const Stored* q = qkv + (b * s.T + t) * C3 + h * s.hs;
  Stored* a = att + ((b * s.H + h) * s.T + t) * s.T;
  float* scores = scores_row(a, s.T);
  float max = -INFINITY;
  for (std::int64_t t2 = 0; t2 <= t; ++t2) {
    const Stored* k = qkv + (b * s.T + t2) * C3 + s.C + h * s.hs;
    scores[t2] = dot<Vectorised>(q, k, s.hs) * scale;
    if (scores[t2] > max) max = scores[t2];
  }
  float sum = 0.0f;
  for (std::int64_t t2 = 0; t2 <= t; ++t2) {
    scores[t2] = std::exp(scores[t2] - max);
    sum += scores[t2];
  }
  const float inverse = 1.0f / sum;
  for (std::int64_t t2 = 0; t2 < s.T; ++t2) detail::store(a[t2], t2 <= t ? scores[t2] * inverse : 0.0f);
  float* o = out + (b * s.T + t) * s.C + h * s.hs;
  for (std::int64_t i = 0; i < s.hs; ++i) o[i] = 0.0f;
  for (std::int64_t t2 = 0; t2 <= t; ++t2) {
    const Stored* v = qkv + (b * s.T + t2) * C3 + 2 * s.C + h * s.hs;
    const float w = detail::widened(a[t2]);
#pragma omp simd
    for (std::int64_t i = 0; i < s.hs; ++i) o[i] += w * detail::widened(v[i]);
  }
}

// All of head h in sequence b: its slices of dq, dk, dv are written by this call only. qkv and
// att as forward_row's.
template <bool Vectorised, class Stored>
void backward_head(const Shape& s, float* dqkv, float* datt, const float* dout, const Stored* qkv,
                   const Stored* att, std::int64_t b, std::int64_t h) {
  const std::int64_t C3 = 3 * s.C;
  const float scale = 1.0f / std::sqrt(static_cast<float>(s.hs));
  for (std::int64_t t = 0; t < s.T; ++t) {
    float* row = dqkv + (b * s.T + t) * C3;
    for (std::int64_t part = 0; part < 3; ++part) {
      for (std::int64_t i = 0; i < s.hs; ++i) row[part * s.C + h * s.hs + i] = 0.0f;
    }
  }
  for (std::int64_t t = 0; t < s.T; ++t) {
    const Stored* a = att + ((b * s.H + h) * s.T + t) * s.T;
    float* da = datt + ((b * s.H + h) * s.T + t) * s.T;
    const float* dout_t = dout + (b * s.T + t) * s.C + h * s.hs;
    // out_t = Σ a[t2] v_t2: da[t2] = dout_t · v_t2, dv_t2 += a[t2] · dout_t.
    for (std::int64_t t2 = 0; t2 <= t; ++t2) {
      const Stored* v = qkv + (b * s.T + t2) * C3 + 2 * s.C + h * s.hs;
      float* dv = dqkv + (b * s.T + t2) * C3 + 2 * s.C + h * s.hs;
      da[t2] = dot<Vectorised>(dout_t, v, s.hs);
      const float w = detail::widened(a[t2]);
#pragma omp simd
      for (std::int64_t i = 0; i < s.hs; ++i) dv[i] += w * dout_t[i];
    }
    // Softmax: dscore[t2] = a[t2] · (da[t2] − Σ a·da).
    float weighted = 0.0f;
    for (std::int64_t t2 = 0; t2 <= t; ++t2) weighted += detail::widened(a[t2]) * da[t2];
    const Stored* q = qkv + (b * s.T + t) * C3 + h * s.hs;
    float* dq = dqkv + (b * s.T + t) * C3 + h * s.hs;
    for (std::int64_t t2 = 0; t2 <= t; ++t2) {
      const float dscore = detail::widened(a[t2]) * (da[t2] - weighted) * scale;
      const Stored* k = qkv + (b * s.T + t2) * C3 + s.C + h * s.hs;
      float* dk = dqkv + (b * s.T + t2) * C3 + s.C + h * s.hs;
#pragma omp simd
      for (std::int64_t i = 0; i < s.hs; ++i) {
        dq[i] += dscore * detail::widened(k[i]);
        dk[i] += dscore * detail::widened(q[i]);
      }
    }
  }
}

template <class Stored>
void attention_forward_of(Backend backend, std::span<float> out, std::span<Stored> att,
                          std::span<const Stored> qkv, std::int64_t B, std::int64_t T,
                          std::int64_t C, std::int64_t H) {
  const Shape s = check("attention_forward", B, T, C, H, qkv.size(), out.size(), att.size(),
                        "out (B·T × C)");
  switch (backend) {
    case Backend::Reference:
      for (std::int64_t b = 0; b < B; ++b)
        for (std::int64_t h = 0; h < H; ++h)
          for (std::int64_t t = 0; t < T; ++t)
            forward_row<false>(s, out.data(), att.data(), qkv.data(), b, h, t);
      return;
    case Backend::Cpu:
#pragma omp parallel for collapse(3) schedule(static)
      for (std::int64_t b = 0; b < B; ++b)
        for (std::int64_t h = 0; h < H; ++h)
          for (std::int64_t t = 0; t < T; ++t)
            forward_row<true>(s, out.data(), att.data(), qkv.data(), b, h, t);
      return;
    case Backend::Kokkos: break;
    case Backend::Cuda:
#if LOWCOMM_HAVE_CUDA
      return cuda_backend::attention_forward(out, att, qkv, B, T, C, H);
#endif
      break;
  }
  unsupported("attention_forward", backend);
}

template <class Stored>
void attention_backward_of(Backend backend, std::span<float> dqkv, std::span<float> datt,
                           std::span<const float> dout, std::span<const Stored> qkv,
                           std::span<const Stored> att, std::int64_t B, std::int64_t T,
                           std::int64_t C, std::int64_t H) {
  constexpr std::string_view kernel = "attention_backward";
  const Shape s = check(kernel, B, T, C, H, qkv.size(), dout.size(), att.size(), "dout (B·T × C)");
  detail::check_size(kernel, "dqkv (B·T × 3C)", dqkv.size(), static_cast<std::int64_t>(qkv.size()));
  detail::check_size(kernel, "datt (B·H·T·T)", datt.size(), static_cast<std::int64_t>(att.size()));
  switch (backend) {
    case Backend::Reference:
      for (std::int64_t b = 0; b < B; ++b)
        for (std::int64_t h = 0; h < H; ++h)
          backward_head<false>(s, dqkv.data(), datt.data(), dout.data(), qkv.data(), att.data(), b, h);
      return;
    case Backend::Cpu:
#pragma omp parallel for collapse(2) schedule(static)
      for (std::int64_t b = 0; b < B; ++b)
        for (std::int64_t h = 0; h < H; ++h)
          backward_head<true>(s, dqkv.data(), datt.data(), dout.data(), qkv.data(), att.data(), b, h);
      return;
    case Backend::Kokkos: break;
    case Backend::Cuda:
#if LOWCOMM_HAVE_CUDA
      return cuda_backend::attention_backward(dqkv, datt, dout, qkv, att, B, T, C, H);
#endif
      break;
  }
  unsupported(kernel, backend);
}

}  // namespace

void attention_forward(Backend backend, std::span<float> out, std::span<float> att,
                       std::span<const float> qkv, std::int64_t B, std::int64_t T,
                       std::int64_t C, std::int64_t H) {
  attention_forward_of(backend, out, att, qkv, B, T, C, H);
}

void attention_forward(Backend backend, std::span<float> out, std::span<std::uint16_t> att_bf16,
                       std::span<const std::uint16_t> qkv_bf16, std::int64_t B, std::int64_t T,
                       std::int64_t C, std::int64_t H) {
  attention_forward_of(backend, out, att_bf16, qkv_bf16, B, T, C, H);
}

void attention_backward(Backend backend, std::span<float> dqkv, std::span<float> datt,
                        std::span<const float> dout, std::span<const float> qkv,
                        std::span<const float> att, std::int64_t B, std::int64_t T,
                        std::int64_t C, std::int64_t H) {
  attention_backward_of(backend, dqkv, datt, dout, qkv, att, B, T, C, H);
}

void attention_backward(Backend backend, std::span<float> dqkv, std::span<float> datt,
                        std::span<const float> dout, std::span<const std::uint16_t> qkv_bf16,
                        std::span<const std::uint16_t> att_bf16, std::int64_t B, std::int64_t T,
                        std::int64_t C, std::int64_t H) {
  attention_backward_of(backend, dqkv, datt, dout, qkv_bf16, att_bf16, B, T, C, H);
}

}  // namespace lowcomm::kernels
