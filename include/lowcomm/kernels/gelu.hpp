#pragma once
// GELU with GPT-2's tanh approximation (PyTorch's nn.GELU(approximate="tanh")):
//   gelu(x) = 0.5 · x · (1 + tanh(sqrt(2/π) · (x + 0.044715 · x³))).
// Elementwise on fp32 spans of equal size. Reference evaluates this formula with std::tanh; Cpu
// uses the equivalent logistic form x / (1 + exp(−2u)) (accurate in the negative tail, where
// 1 + tanh u cancels), agreeing with Reference within float rounding.
#include <cstdint>
#include <span>

#include "lowcomm/kernels/backend_name.hpp"

namespace lowcomm::kernels {

void gelu_forward(Backend backend, std::span<float> out, std::span<const float> inp);

// dinp = gelu'(inp) · dout (overwritten, not accumulated). dinp may be dout itself (in place).
void gelu_backward(Backend backend, std::span<float> dinp, std::span<const float> inp,
                   std::span<const float> dout);

// The same with inp stored as bfloat16 bits (float16.hpp), as a bf16 run keeps the MLP's values
// before GELU: bitwise the fp32 kernels on inp widened to fp32.
void gelu_forward(Backend backend, std::span<float> out, std::span<const std::uint16_t> inp_bf16);
void gelu_backward(Backend backend, std::span<float> dinp, std::span<const std::uint16_t> inp_bf16,
                   std::span<const float> dout);

}  // namespace lowcomm::kernels
