#pragma once
// attention.hpp's rows on the host, shared by the Reference (in order, scalar dot products) and
// the Cpu backend (threads over rows and heads, vectorised dot products). One query row at a
// time, as llm.c: at GPT-2's short training contexts the T × T scores are small, so the time is in
// the projections around this kernel, and plain loops with vectorised head-size inner loops are
// enough. The score scale 1/sqrt(hs) is applied to the dot product, as PyTorch's (q @ kᵀ) · scale.
// One template per kernel serves qkv and att stored as fp32 or as bf16 (stored_values.hpp).
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "stored_values.hpp"

namespace lowcomm::kernels::detail {

struct AttentionShape {
  std::int64_t B, T, C, H, hs;
};

// The dispatch has checked that H divides C.
inline AttentionShape attention_shape(std::int64_t B, std::int64_t T, std::int64_t C, std::int64_t H) {
  return {B, T, C, H, C / H};
}

template <bool Vectorised, class X, class Y>
inline float attention_dot(const X* a, const Y* b, std::int64_t n) {
  float sum = 0.0f;
  if constexpr (Vectorised) {
#pragma omp simd reduction(+ : sum)
    for (std::int64_t i = 0; i < n; ++i) sum += widened(a[i]) * widened(b[i]);
  } else {
    for (std::int64_t i = 0; i < n; ++i) sum += widened(a[i]) * widened(b[i]);
  }
  return sum;
}

// Where a query row's scores are computed: att's row itself when att is fp32; when it is bf16,
// a row of fp32 kept by each thread (grown to the longest T seen), so the softmax runs in fp32
// and only its result is rounded.
template <class Stored>
float* attention_scores_row(Stored* att_row, std::int64_t T) {
  if constexpr (std::is_same_v<Stored, float>) {
    return att_row;
  } else {
    thread_local std::vector<float> row;
    if (row.size() < static_cast<std::size_t>(T)) row.resize(static_cast<std::size_t>(T));
    return row.data();
  }
}

// Query row t of head h in sequence b. qkv and att are fp32 or bf16 (stored_values.hpp); the
// weights of v are att's stored values.
template <bool Vectorised, class Stored>
void attention_forward_row(const AttentionShape& s, float* out, Stored* att, const Stored* qkv, std::int64_t b,
                           std::int64_t h, std::int64_t t) {
  const std::int64_t C3 = 3 * s.C;
  const float scale = 1.0f / std::sqrt(static_cast<float>(s.hs));
  const Stored* q = qkv + (b * s.T + t) * C3 + h * s.hs;
  Stored* a = att + ((b * s.H + h) * s.T + t) * s.T;
  float* scores = attention_scores_row(a, s.T);
  float max = -INFINITY;
  for (std::int64_t t2 = 0; t2 <= t; ++t2) {
    const Stored* k = qkv + (b * s.T + t2) * C3 + s.C + h * s.hs;
    scores[t2] = attention_dot<Vectorised>(q, k, s.hs) * scale;
    if (scores[t2] > max) max = scores[t2];
  }
  float sum = 0.0f;
  for (std::int64_t t2 = 0; t2 <= t; ++t2) {
    scores[t2] = std::exp(scores[t2] - max);
    sum += scores[t2];
  }
  const float inverse = 1.0f / sum;
  for (std::int64_t t2 = 0; t2 < s.T; ++t2) store(a[t2], t2 <= t ? scores[t2] * inverse : 0.0f);
  float* o = out + (b * s.T + t) * s.C + h * s.hs;
  for (std::int64_t i = 0; i < s.hs; ++i) o[i] = 0.0f;
  for (std::int64_t t2 = 0; t2 <= t; ++t2) {
    const Stored* v = qkv + (b * s.T + t2) * C3 + 2 * s.C + h * s.hs;
    const float w = widened(a[t2]);
#pragma omp simd
    for (std::int64_t i = 0; i < s.hs; ++i) o[i] += w * widened(v[i]);
  }
}

// All of head h in sequence b: its slices of dq, dk, dv are written by this call only. qkv and
// att as attention_forward_row's.
template <bool Vectorised, class Stored>
void attention_backward_head(const AttentionShape& s, float* dqkv, float* datt, const float* dout,
                             const Stored* qkv, const Stored* att, std::int64_t b, std::int64_t h) {
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
      da[t2] = attention_dot<Vectorised>(dout_t, v, s.hs);
      const float w = widened(a[t2]);
#pragma omp simd
      for (std::int64_t i = 0; i < s.hs; ++i) dv[i] += w * dout_t[i];
    }
    // Softmax: dscore[t2] = a[t2] · (da[t2] − Σ a·da).
    float weighted = 0.0f;
    for (std::int64_t t2 = 0; t2 <= t; ++t2) weighted += widened(a[t2]) * da[t2];
    const Stored* q = qkv + (b * s.T + t) * C3 + h * s.hs;
    float* dq = dqkv + (b * s.T + t) * C3 + h * s.hs;
    for (std::int64_t t2 = 0; t2 <= t; ++t2) {
      const float dscore = widened(a[t2]) * (da[t2] - weighted) * scale;
      const Stored* k = qkv + (b * s.T + t2) * C3 + s.C + h * s.hs;
      float* dk = dqkv + (b * s.T + t2) * C3 + s.C + h * s.hs;
#pragma omp simd
      for (std::int64_t i = 0; i < s.hs; ++i) {
        dq[i] += dscore * widened(k[i]);
        dk[i] += dscore * widened(q[i]);
      }
    }
  }
}

}  // namespace lowcomm::kernels::detail
