#pragma once
// GPT-2's input embedding: a token embedding looked up per position plus a learned position
// embedding. Row-major fp32; B sequences of T tokens, width C, vocabulary V.
//
// The backward pass scatters into the token table, where a token occurring twice accumulates
// twice. Both backends add the contributions in the same (b, t) order, so Cpu equals Reference
// bitwise and neither depends on the thread count (Cpu splits the columns between threads, never
// the positions, which is what keeps the scatter free of races and of atomics).
#include <cstdint>
#include <span>

#include "lowcomm/kernels/backend_name.hpp"

namespace lowcomm::kernels {

// out[b,t,:] = wte[tokens[b,t],:] + wpe[t,:]. out is B·T × C, wte V × C, wpe holds at least T
// rows of C (the model's whole context table may be passed). A token outside [0, V) throws
// lowcomm::Error naming the token, its position and V.
void embedding_forward(Backend backend, std::span<float> out, std::span<const std::int32_t> tokens,
                       std::span<const float> wte, std::span<const float> wpe, std::int64_t B,
                       std::int64_t T, std::int64_t C, std::int64_t V);

// dwte[tokens[b,t],:] += dout[b,t,:]; dwpe[t,:] += dout[b,t,:] (both accumulate, in (b, t) order).
void embedding_backward(Backend backend, std::span<float> dwte, std::span<float> dwpe,
                        std::span<const float> dout, std::span<const std::int32_t> tokens,
                        std::int64_t B, std::int64_t T, std::int64_t C, std::int64_t V);

}  // namespace lowcomm::kernels
