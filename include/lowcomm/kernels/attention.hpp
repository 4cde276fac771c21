#pragma once
// Causal multi-head self-attention as GPT-2: from the fused projection qkv (B, T, 3C), whose row
// holds q | k | v and head h occupies columns h·hs … (h+1)·hs − 1 of each (hs = C / H),
//   att[b,h,t,:t+1] = softmax(q_t · k_{0…t} / sqrt(hs)),   out[b,t,h·hs…] = Σ_{t2≤t} att[t2] · v_{t2}.
// The softmax subtracts the row maximum before exponentiating (no overflow for large scores).
// Masked entries (t2 > t) of att are stored as 0. fp32, row-major.
//
// Cpu parallelises over (b, h, t) in the forward pass and over (b, h) in the backward pass (each
// head's dq, dk, dv are written by one thread only), with the same summation order as Reference
// except for vectorised dot products: they agree within float rounding, and neither depends on
// the thread count.
#include <cstdint>
#include <span>

#include "lowcomm/kernels/backend_name.hpp"

namespace lowcomm::kernels {

// out (B·T × C), att (B·H·T·T, saved for the backward pass), qkv (B·T × 3C). C % H == 0.
void attention_forward(Backend backend, std::span<float> out, std::span<float> att,
                       std::span<const float> qkv, std::int64_t B, std::int64_t T,
                       std::int64_t C, std::int64_t H);

// dqkv (B·T × 3C) is overwritten with ∂L/∂qkv given dout = ∂L/∂out; att is the forward pass's.
// datt is caller-provided workspace of B·H·T·T floats (so a training step allocates nothing on
// the host backends; CUDA's bf16 forms take an fp32 copy of att from the stream-ordered pool).
void attention_backward(Backend backend, std::span<float> dqkv, std::span<float> datt,
                        std::span<const float> dout, std::span<const float> qkv,
                        std::span<const float> att, std::int64_t B, std::int64_t T,
                        std::int64_t C, std::int64_t H);

// The same with qkv and att stored as bfloat16 bits (float16.hpp), as a bf16 run keeps them. The
// arithmetic is the fp32 kernels' on the values widened to fp32. The forward pass rounds each
// probability to bf16 (to nearest even) as it stores it and weights v with the stored value, so
// the backward pass, which reads att, differentiates what the forward pass computed. On the
// Reference:
//   att_bf16 = bf16(att of the fp32 kernel on the widened qkv), bitwise;
//   out      = Σ_{t2≤t} widen(att_bf16[t2]) · v_{t2};
//   the backward pass is bitwise the fp32 kernel's on the widened qkv and att.
// Cpu and CUDA agree with it within float rounding, as in fp32 (their vector loops and products
// group the sums differently; a probability can then round to the neighbouring bf16 value).
void attention_forward(Backend backend, std::span<float> out, std::span<std::uint16_t> att_bf16,
                       std::span<const std::uint16_t> qkv_bf16, std::int64_t B, std::int64_t T,
                       std::int64_t C, std::int64_t H);
void attention_backward(Backend backend, std::span<float> dqkv, std::span<float> datt,
                        std::span<const float> dout, std::span<const std::uint16_t> qkv_bf16,
                        std::span<const std::uint16_t> att_bf16, std::int64_t B, std::int64_t T,
                        std::int64_t C, std::int64_t H);

}  // namespace lowcomm::kernels
