#pragma once
// optimizer_updates.hpp's updates for one element, written once for every backend (the Reference
// and Cpu loops, the Kokkos and CUDA kernels), so that they cannot drift apart. lowcomm compiles
// them without fused multiply-adds (-ffp-contract=off, nvcc --fmad=false): each backend rounds
// every operation as the Reference does.
#include <cmath>

#include "lowcomm/core/host_device.hpp"
#include "lowcomm/kernels/optimizer_updates.hpp"

namespace lowcomm::kernels {

LOWCOMM_HOST_DEVICE inline void adamw_element(const AdamWScalars& s, float& p, float g, float& m, float& v) {
  const float decayed = p * s.decay;
  m = m * s.beta1 + s.one_minus_beta1 * g;
  v = v * s.beta2 + s.one_minus_beta2 * g * g;
  const float denom = std::sqrt(v) / s.bc2_sqrt + s.eps;
  p = decayed + s.neg_step_size * m / denom;
}

// `buffer` is not read or written without s.momentum (it may then point anywhere).
LOWCOMM_HOST_DEVICE inline void sgd_element(const SgdScalars& s, float& p, float g, float* buffer) {
  float d = g;
  if (s.decays) d = d + s.wd * p;
  if (s.momentum) {
    *buffer = s.first ? d : *buffer * s.mu + s.keep * d;
    d = s.nesterov ? d + s.mu * *buffer : *buffer;
  }
  p = p + s.neg_lr * d;
}

LOWCOMM_HOST_DEVICE inline void signum_element(const SignumScalars& s, float& p, float g, float& m) {
  m = m * s.beta + s.one_minus_beta * g;
  const float sign = m > 0.0f ? 1.0f : (m < 0.0f ? -1.0f : (m == 0.0f ? 0.0f : m));
  if (s.decays) p = p * s.decay;
  p = p + s.neg_lr * sign;
}

}  // namespace lowcomm::kernels
