#pragma once
// elementwise.hpp's maps for one element, written once for every backend (the Reference and Cpu
// loops, the Kokkos and CUDA kernels). Compiled without fused multiply-adds (-ffp-contract=off,
// nvcc --fmad=false), so each backend rounds as the Reference does.
#include "lowcomm/core/host_device.hpp"

namespace lowcomm::kernels {

// Both comparisons are false for zeros and NaN, so those become 0 − 0 = +0.
LOWCOMM_HOST_DEVICE inline float sign_of(float x) {
  return static_cast<float>(x > 0.0f) - static_cast<float>(x < 0.0f);
}
LOWCOMM_HOST_DEVICE inline float scaled(float alpha, float x) { return alpha * x; }
LOWCOMM_HOST_DEVICE inline float scaled_sum(float alpha, float a, float b) { return alpha * a + b; }
LOWCOMM_HOST_DEVICE inline float difference(float a, float b) { return a - b; }
LOWCOMM_HOST_DEVICE inline float sign_step(float alpha, float g, float x) { return x - alpha * sign_of(g); }

}  // namespace lowcomm::kernels
