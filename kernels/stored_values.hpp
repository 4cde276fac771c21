#pragma once
// An activation's values as the model's kernels read and write them, whether it is stored as fp32
// or, in a bf16 run, as bfloat16 bits (float16.hpp): read widened to fp32 (exact), written rounded
// to nearest even. One template of a kernel then serves both storages, on every backend (the
// Reference and Cpu loops, kernels/*_rows.hpp, the CUDA kernels).
#include <cstdint>

#include "lowcomm/core/host_device.hpp"
#include "lowcomm/kernels/float16.hpp"

namespace lowcomm::kernels::detail {

LOWCOMM_HOST_DEVICE inline float widened(float value) { return value; }
LOWCOMM_HOST_DEVICE inline float widened(std::uint16_t bits) { return bf16_to_float(bits); }

LOWCOMM_HOST_DEVICE inline void store(float& to, float value) { to = value; }
LOWCOMM_HOST_DEVICE inline void store(std::uint16_t& to, float value) { to = float_to_bf16(value); }

}  // namespace lowcomm::kernels::detail
