// Causal multi-head self-attention (attention.hpp) on the GPU, as llm.c's CUDA version: the
// products on cuBLAS, one strided batched product over the B·H heads each, and kernels of our own
// for the layouts and the softmax. Per head (b, h), with Q, K, V, dO its T × hs matrices:
//   forward   S  (T × T)  = Q · Kᵀ                 att = softmax(S · scale), masked
//             O  (T × hs) = att · V
//   backward  dV (T × hs) = attᵀ · dO               dA  (T × T)  = dO · Vᵀ
//             dS (T × T)  = att ∘ (dA − rowsum(att ∘ dA)) · scale, masked
//             dQ (T × hs) = dS · K                  dK  (T × hs) = dSᵀ · Q
// cuBLAS wants each matrix contiguous, while a head's q, k or v is a strided slice of qkv's rows,
// so a kernel first copies them into head-major buffers [B][H][T][hs] and another copies the
// results back (copies, exact). The products run over the whole T × T square: att is 0 above the
// diagonal and so is dS (written as 0 there), so the masked terms add nothing. The row kernels
// take the Reference's formulas as written — the scale applied to the finished dot product, the
// row maximum subtracted before exp, one division for the normaliser, dS's products in its order —
// with the row sums as a fixed tree instead of a loop, and cuBLAS sums in an order of its own: the
// results match the Reference within float rounding, the same bits run to run. att and datt
// (the workspace) hold S and dA in place.
// qkv and att stored as bf16 (a bf16 run): qkv is widened in its head-major copy; att's fp32
// values (rounded by the softmax, so that O weights v with what att stores) live in a buffer
// beside it (fp32_probabilities). The products stay fp32, so these match the host backends' bf16
// forms within float rounding; tensor-core products on bf16 copies would be faster (not done).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>

#include "cuda_blas.cuh"
#include "cuda_block_reduce.cuh"
#include "cuda_convert.cuh"
#include "cuda_backend.hpp"
#include "../stored_values.hpp"

namespace lowcomm::kernels::cuda_backend {

namespace {

// Where element e of a row-major (B·T) × (parts·C) tensor (qkv: parts 3, q | k | v; out or dout:
// parts 1) sits in its head-major copy [parts][B][H][T][hs].
struct HeadMajorOffset {
  std::int64_t B, T, C, H, parts;
  __device__ std::int64_t operator()(std::int64_t e) const {
    const std::int64_t hs = C / H;
    const std::int64_t row = e / (parts * C), column = e % (parts * C);
    const std::int64_t b = row / T, t = row % T;
    const std::int64_t part = column / C, h = column % C / hs, i = column % hs;
    return (((part * B + b) * H + h) * T + t) * hs + i;
  }
};

// rows fp32 or bf16 (../stored_values.hpp), the copy fp32.
template <class Stored>
__global__ void to_head_major(HeadMajorOffset at, std::int64_t size, const Stored* rows, float* heads) {
  for (std::int64_t e = first_item(); e < size; e += item_stride()) heads[at(e)] = detail::widened(rows[e]);
}

__global__ void from_head_major(HeadMajorOffset at, std::int64_t size, const float* heads, float* rows) {
  for (std::int64_t e = first_item(); e < size; e += item_stride()) rows[e] = heads[at(e)];
}

// The row kernels: one block of kThreads per row of att (the grid striding over rows), its
// thread j taking columns j, j + kThreads, …
// att's row t of every head, in place, from the scores S = q_t · k_t2 in it:
// a = S · scale, then exp(a − max) / Σ exp over t2 ≤ t, 0 for t2 > t (forward_row's arithmetic).
// With `to_bf16` each probability is rounded to bf16 (and kept widened), the value att stores.
__global__ void causal_softmax(float* att, std::int64_t rows, std::int64_t T, float scale, bool to_bf16) {
  for (std::int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    float* a = att + row * T;
    const std::int64_t t = row % T;
    float row_max = -INFINITY;
    for (std::int64_t t2 = threadIdx.x; t2 <= t; t2 += blockDim.x) {
      a[t2] = a[t2] * scale;
      row_max = fmaxf(row_max, a[t2]);
    }
    row_max = block_reduce(row_max, -INFINITY, Larger{});
    float sum = 0.0f;
    for (std::int64_t t2 = threadIdx.x; t2 <= t; t2 += blockDim.x) {
      a[t2] = expf(a[t2] - row_max);
      sum += a[t2];
    }
    const float inverse = 1.0f / block_sum(sum);
    // Each thread touches only its own columns (its first ones, then every kThreads-th): in place
    // with no other thread's values read.
    for (std::int64_t t2 = threadIdx.x; t2 < T; t2 += blockDim.x) {
      const float probability = t2 <= t ? a[t2] * inverse : 0.0f;
      a[t2] = to_bf16 ? bf16_to_float(float_to_bf16(probability)) : probability;
    }
  }
}

// datt's row t of every head, in place, from dA = dO_t · v_t2 in it: the scores' gradient
// dS = a · (dA − Σ_{t2≤t} a · dA) · scale for t2 ≤ t, 0 for t2 > t (backward_head's arithmetic;
// the 0s keep the masked dA out of dQ and dK).
__global__ void causal_softmax_backward(float* datt, const float* att, std::int64_t rows, std::int64_t T,
                                        float scale) {
  for (std::int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    float* da = datt + row * T;
    const float* a = att + row * T;
    const std::int64_t t = row % T;
    float weighted = 0.0f;
    for (std::int64_t t2 = threadIdx.x; t2 <= t; t2 += blockDim.x) weighted += a[t2] * da[t2];
    weighted = block_sum(weighted);
    // Each thread touches only its own columns, as in causal_softmax.
    for (std::int64_t t2 = threadIdx.x; t2 < T; t2 += blockDim.x) {
      da[t2] = t2 <= t ? a[t2] * (da[t2] - weighted) * scale : 0.0f;
    }
  }
}

// 1 / sqrt(hs) in float, as the Reference's host code computes it.
float score_scale(std::int64_t hs) { return 1.0f / std::sqrt(static_cast<float>(hs)); }

// The probabilities in fp32, where the softmax and the products read and write them. The forward
// pass's: att's own memory when att is fp32, else `buffer` (stored into att at the end).
template <class Stored>
float* fp32_probabilities(Stored* att, std::size_t count, DeviceBuffer<float>& buffer) {
  if constexpr (std::is_same_v<Stored, float>) {
    return att;
  } else {
    buffer = DeviceBuffer<float>(count);
    return buffer.data();
  }
}

// The backward pass's: att itself when it is fp32, else att widened into `buffer`.
template <class Stored>
const float* fp32_probabilities(const Stored* att, std::size_t count, DeviceBuffer<float>& buffer) {
  if constexpr (std::is_same_v<Stored, float>) {
    return att;
  } else {
    buffer = DeviceBuffer<float>(count);
    const auto n = static_cast<std::int64_t>(count);
    launch("attention_backward (att widened)", convert_values<Stored, float>, n, att, n, buffer.data());
    return buffer.data();
  }
}

template <class Stored>
void attention_forward_of(std::span<float> out, std::span<Stored> att, std::span<const Stored> qkv, std::int64_t B,
                          std::int64_t T, std::int64_t C, std::int64_t H) {
  if (att.empty()) return;  // B or T is 0 (H is positive)
  const std::int64_t hs = C / H, heads = B * H, rows = heads * T;
  const std::int64_t head_size = T * hs, square = T * T, width = B * T * C;
  const Input<Stored> projections(qkv);
  Output<Stored> stored_probabilities(att);
  DeviceBuffer<float> fp32_buffer;
  float* const probabilities = fp32_probabilities(stored_probabilities.data(), att.size(), fp32_buffer);
  Output<float> result(out);
  const DeviceBuffer<float> qkv_heads(static_cast<std::size_t>(3 * width));
  const DeviceBuffer<float> out_heads(static_cast<std::size_t>(width));
  const float* q = qkv_heads.data();
  const float* k = q + width;
  const float* v = k + width;
  if (hs == 0) {
    // C = 0: every score is the empty dot product 0, which the softmax scales by 1/sqrt(0) into
    // NaN on and below the diagonal, as the Reference does.
    check(cudaMemsetAsync(probabilities, 0, att.size() * sizeof(float), stream()),
          "cudaMemsetAsync (attention_forward)");
  } else {
    launch("attention_forward (to head-major)", to_head_major<Stored>, 3 * width, HeadMajorOffset{B, T, C, H, 3},
           3 * width, projections.data(), qkv_heads.data());
    // S (T × T) = Q (T × hs) · Kᵀ, K stored T × hs: m = T, n = T, k = hs, per head.
    row_major_gemm(false, true, T, T, hs, 1.0f, q, head_size, k, head_size, 0.0f, probabilities, square,
                   heads);
  }
  causal_softmax<<<row_blocks(rows), kThreads, 0, stream()>>>(probabilities, rows, T, score_scale(hs),
                                                              !std::is_same_v<Stored, float>);
  check(cudaGetLastError(), "attention_forward (softmax)");
  if (hs > 0) {
    // O (T × hs) = att (T × T) · V (T × hs): m = T, n = hs, k = T, per head.
    row_major_gemm(false, false, T, hs, T, 1.0f, probabilities, square, v, head_size, 0.0f, out_heads.data(),
                   head_size, heads);
    launch("attention_forward (from head-major)", from_head_major, width, HeadMajorOffset{B, T, C, H, 1}, width,
           out_heads.data(), result.data());
  }
  if constexpr (!std::is_same_v<Stored, float>) {
    const auto n = static_cast<std::int64_t>(att.size());
    launch("attention_forward (att to bf16)", convert_values<float, Stored>, n, probabilities, n,
           stored_probabilities.data());
  }
  result.finish();
  stored_probabilities.finish();
}

template <class Stored>
void attention_backward_of(std::span<float> dqkv, std::span<float> datt, std::span<const float> dout,
                           std::span<const Stored> qkv, std::span<const Stored> att, std::int64_t B, std::int64_t T,
                           std::int64_t C, std::int64_t H) {
  if (dqkv.empty()) return;  // B, T or C is 0: no gradient to write
  const std::int64_t hs = C / H, heads = B * H, rows = heads * T;
  const std::int64_t head_size = T * hs, square = T * T, width = B * T * C;
  const Input<Stored> projections(qkv);
  const Input<Stored> stored_probabilities(att);
  DeviceBuffer<float> fp32_buffer;
  const float* const probabilities = fp32_probabilities(stored_probabilities.data(), att.size(), fp32_buffer);
  const Input<float> gradient(dout);
  // datt is workspace: used in place when the kernels can reach it, else a device buffer of its
  // size (nothing of it need come back).
  DeviceBuffer<float> staged_workspace;
  float* workspace = datt.data();
  if (!device_accessible(workspace)) {
    staged_workspace = DeviceBuffer<float>(datt.size());
    workspace = staged_workspace.data();
  }
  const DeviceBuffer<float> qkv_heads(static_cast<std::size_t>(3 * width));
  const DeviceBuffer<float> dout_heads(static_cast<std::size_t>(width));
  const DeviceBuffer<float> dqkv_heads(static_cast<std::size_t>(3 * width));
  launch("attention_backward (qkv to head-major)", to_head_major<Stored>, 3 * width, HeadMajorOffset{B, T, C, H, 3},
         3 * width, projections.data(), qkv_heads.data());
  launch("attention_backward (dout to head-major)", to_head_major<float>, width, HeadMajorOffset{B, T, C, H, 1}, width,
         gradient.data(), dout_heads.data());
  const float* q = qkv_heads.data();
  const float* k = q + width;
  const float* v = k + width;
  float* dq = dqkv_heads.data();
  float* dk = dq + width;
  float* dv = dk + width;
  // dV (T × hs) = attᵀ · dO, att stored T × T, dO T × hs: m = T, n = hs, k = T, per head.
  row_major_gemm(true, false, T, hs, T, 1.0f, probabilities, square, dout_heads.data(), head_size, 0.0f, dv,
                 head_size, heads);
  // dA (T × T) = dO (T × hs) · Vᵀ, V stored T × hs: m = T, n = T, k = hs, per head.
  row_major_gemm(false, true, T, T, hs, 1.0f, dout_heads.data(), head_size, v, head_size, 0.0f, workspace, square,
                 heads);
  causal_softmax_backward<<<row_blocks(rows), kThreads, 0, stream()>>>(workspace, probabilities, rows, T,
                                                                       score_scale(hs));
  check(cudaGetLastError(), "attention_backward (softmax)");
  // dQ (T × hs) = dS (T × T) · K (T × hs): m = T, n = hs, k = T, per head.
  row_major_gemm(false, false, T, hs, T, 1.0f, workspace, square, k, head_size, 0.0f, dq, head_size, heads);
  // dK (T × hs) = dSᵀ · Q, dS stored T × T, Q T × hs: m = T, n = hs, k = T, per head.
  row_major_gemm(true, false, T, hs, T, 1.0f, workspace, square, q, head_size, 0.0f, dk, head_size, heads);
  Output<float> result(dqkv);
  launch("attention_backward (from head-major)", from_head_major, 3 * width, HeadMajorOffset{B, T, C, H, 3},
         3 * width, dqkv_heads.data(), result.data());
  result.finish();
}

}  // namespace

void attention_forward(std::span<float> out, std::span<float> att, std::span<const float> qkv, std::int64_t B,
                       std::int64_t T, std::int64_t C, std::int64_t H) {
  attention_forward_of(out, att, qkv, B, T, C, H);
}

void attention_forward(std::span<float> out, std::span<std::uint16_t> att_bf16, std::span<const std::uint16_t> qkv_bf16,
                       std::int64_t B, std::int64_t T, std::int64_t C, std::int64_t H) {
  attention_forward_of(out, att_bf16, qkv_bf16, B, T, C, H);
}

void attention_backward(std::span<float> dqkv, std::span<float> datt, std::span<const float> dout,
                        std::span<const float> qkv, std::span<const float> att, std::int64_t B, std::int64_t T,
                        std::int64_t C, std::int64_t H) {
  attention_backward_of(dqkv, datt, dout, qkv, att, B, T, C, H);
}

void attention_backward(std::span<float> dqkv, std::span<float> datt, std::span<const float> dout,
                        std::span<const std::uint16_t> qkv_bf16, std::span<const std::uint16_t> att_bf16,
                        std::int64_t B, std::int64_t T, std::int64_t C, std::int64_t H) {
  attention_backward_of(dqkv, datt, dout, qkv_bf16, att_bf16, B, T, C, H);
}

}  // namespace lowcomm::kernels::cuda_backend
