#pragma once
// Softmax cross-entropy over a vocabulary: N rows of V logits (row-major fp32) and one target
// class per row, as F.cross_entropy. The softmax subtracts the row maximum first.
//
// Rows are independent: Cpu splits them between threads and vectorises within a row (its row
// sums differ from Reference's index-order sums by float rounding only).
#include <cstdint>
#include <span>

#include "lowcomm/kernels/backend_name.hpp"

namespace lowcomm::kernels {

// losses[n] = log Σ_v exp(logits[n,v]) − logits[n, targets[n]]. A target outside [0, V) throws
// lowcomm::Error naming it. The model's loss is the mean of losses (summed in index order).
void cross_entropy_forward(Backend backend, std::span<float> losses, std::span<const float> logits,
                           std::span<const std::int32_t> targets, std::int64_t N, std::int64_t V);

// The forward and backward passes fused (one softmax per row, not two): losses as above and
// dlogits[n,v] = scale · (softmax(logits[n])_v − [v == targets[n]]), overwritten; scale = 1/N
// gives the gradient of the mean loss. dlogits may be logits itself (in place: each row is read
// in full before it is written), which is how the model avoids a second V-wide buffer.
void cross_entropy_forward_backward(Backend backend, std::span<float> losses,
                                    std::span<float> dlogits, std::span<const float> logits,
                                    std::span<const std::int32_t> targets, std::int64_t N,
                                    std::int64_t V, float scale);

}  // namespace lowcomm::kernels
