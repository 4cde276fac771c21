#pragma once
// The residual connection of a transformer block: out = a + b elementwise (fp32 spans of equal
// size; out may alias a or b). Its backward pass needs no kernel: both inputs receive dout.
// Cpu is a threaded, vectorised loop and equals Reference bitwise.
#include <span>

#include "lowcomm/kernels/backend_name.hpp"

namespace lowcomm::kernels {

void residual_add(Backend backend, std::span<float> out, std::span<const float> a,
                  std::span<const float> b);

}  // namespace lowcomm::kernels
