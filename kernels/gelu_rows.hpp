#pragma once
// GELU's tanh approximation on the host, shared by the Reference and the Cpu backend: the
// constants and the argument u of the tanh, 0.5·x·(1 + tanh u).
namespace lowcomm::kernels::detail {

inline constexpr float kGeluSqrt2OverPi = 0.7978845608028654f;
inline constexpr float kGeluCubic = 0.044715f;

inline float gelu_cubic_argument(float x) { return kGeluSqrt2OverPi * (x + kGeluCubic * x * x * x); }

}  // namespace lowcomm::kernels::detail
