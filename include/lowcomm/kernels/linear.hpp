#pragma once
// A fully connected layer as nn.Linear: weight is stored (out_features, in_features) row-major,
// inputs are N rows of IC features, outputs N rows of OC. The matrix products are where a
// transformer spends its time: Cpu calls the library's one BLAS product (kernels/cpu/blas.hpp:
// OpenBLAS by default, its threads matched to omp_get_max_threads() so the two pools never
// oversubscribe the cores; another CBLAS or Eigen as configured). Reference is plain loops (float
// sums in index order).
//
// Cpu and Reference agree within float rounding (relative sqrt(K)·2^−24 of the magnitudes).
// With Precision::Bf16 the products take bfloat16-rounded operands (precision.hpp); the bias and
// its gradient stay fp32.
// Cpu is deterministic for a given thread count (OpenBLAS partitions statically, the bias
// reduction runs over rows in order with the columns split between threads).
#include <cstdint>
#include <span>

#include "lowcomm/kernels/backend_name.hpp"
#include "lowcomm/kernels/precision.hpp"

namespace lowcomm::kernels {

// out = inp · weightᵀ + bias (out N × OC, inp N × IC, weight OC × IC, bias OC or empty for none).
void linear_forward(Backend backend, std::span<float> out, std::span<const float> inp,
                    std::span<const float> weight, std::span<const float> bias, std::int64_t N,
                    std::int64_t IC, std::int64_t OC, Precision precision = Precision::Fp32);

// dinp = dout · weight (overwritten; skipped when dinp is empty), dweight += doutᵀ · inp,
// dbias += Σ_rows dout (skipped when dbias is empty). The parameter gradients accumulate, as
// PyTorch's .grad does, so a tied weight (GPT-2's wte) can collect from two uses.
void linear_backward(Backend backend, std::span<float> dinp, std::span<float> dweight,
                     std::span<float> dbias, std::span<const float> dout,
                     std::span<const float> inp, std::span<const float> weight, std::int64_t N,
                     std::int64_t IC, std::int64_t OC, Precision precision = Precision::Fp32);

// The same with `inp` stored as bfloat16, its 16 bits (float16.hpp): the products are
// Precision::Bf16's, reading inp as stored; the result is bitwise the fp32-input kernels' in
// Precision::Bf16 given inp's values widened to fp32 (rounding them again changes nothing). For
// the activations that feed only products, which a bf16 run keeps at half the memory.
void linear_forward(Backend backend, std::span<float> out, std::span<const std::uint16_t> inp_bf16,
                    std::span<const float> weight, std::span<const float> bias, std::int64_t N,
                    std::int64_t IC, std::int64_t OC);
void linear_backward(Backend backend, std::span<float> dinp, std::span<float> dweight,
                     std::span<float> dbias, std::span<const float> dout,
                     std::span<const std::uint16_t> inp_bf16, std::span<const float> weight, std::int64_t N,
                     std::int64_t IC, std::int64_t OC);

}  // namespace lowcomm::kernels
