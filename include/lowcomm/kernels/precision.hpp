#pragma once
// The precision of the model's matrix products (train.precision). Fp32 multiplies fp32 values.
// Bf16 is mixed precision as the published GPU runs train: each product's operands (activations,
// weights, and in the backward pass the output gradients) are rounded to bfloat16, to nearest
// even, and multiplied with fp32 accumulation; the results, everything else the model computes
// (layer norm, attention's softmax and its products, GELU, the loss) and the master weights,
// gradients and optimizer state stay fp32. A bf16 product of two bf16 values is exact in fp32, so
// the host backends compute exactly this by rounding copies of the operands before their fp32
// product; CUDA multiplies bf16 operands on the tensor cores (cublasGemmEx, fp32 compute).
#include <optional>
#include <string_view>

namespace lowcomm::kernels {

enum class Precision { Fp32, Bf16 };

std::string_view to_string(Precision precision);  // "fp32", "bf16"
std::optional<Precision> precision_named(std::string_view name);

}  // namespace lowcomm::kernels
