#pragma once
// The CUDA versions of the reference model's kernels (Backend::Cuda; kernels/cpu has the
// Reference and Cpu ones): the same contracts as include/lowcomm/kernels/{embedding,layernorm,
// attention,gelu,residual,cross_entropy,linear}.hpp without the Backend argument. The dispatch in
// kernels/cpu checks sizes and token/target ranges first, so these assume valid arguments. Spans
// may be host or device memory, as for the compressors' kernels (cuda_backend.hpp). Results match
// the Reference within float rounding, not bitwise: reductions run in parallel, in a fixed order,
// so the same bits run to run. For finite inputs: attention's products run over the whole T × T
// square with the masked weights 0, so an infinite value at a masked position (0 · inf) gives NaN
// where the Reference, which skips those terms, stays finite. Defined in embedding.cu, layernorm.cu, attention.cu, gelu.cu,
// residual.cu, cross_entropy.cu and linear.cu. No header of this one includes CUDA's.
#include <cstdint>
#include <span>

namespace lowcomm::kernels::cuda_backend {

void embedding_forward(std::span<float> out, std::span<const std::int32_t> tokens, std::span<const float> wte,
                       std::span<const float> wpe, std::int64_t B, std::int64_t T, std::int64_t C, std::int64_t V);
void embedding_backward(std::span<float> dwte, std::span<float> dwpe, std::span<const float> dout,
                        std::span<const std::int32_t> tokens, std::int64_t B, std::int64_t T, std::int64_t C,
                        std::int64_t V);

void layernorm_forward(std::span<float> out, std::span<float> mean, std::span<float> rstd, std::span<const float> inp,
                       std::span<const float> weight, std::span<const float> bias, std::int64_t N, std::int64_t C,
                       float eps);
void layernorm_backward(std::span<float> dinp, std::span<float> dweight, std::span<float> dbias,
                        std::span<const float> dout, std::span<const float> inp, std::span<const float> weight,
                        std::span<const float> mean, std::span<const float> rstd, std::int64_t N, std::int64_t C);

void attention_forward(std::span<float> out, std::span<float> att, std::span<const float> qkv, std::int64_t B,
                       std::int64_t T, std::int64_t C, std::int64_t H);
void attention_backward(std::span<float> dqkv, std::span<float> datt, std::span<const float> dout,
                        std::span<const float> qkv, std::span<const float> att, std::int64_t B, std::int64_t T,
                        std::int64_t C, std::int64_t H);
// The same with qkv and att stored as bf16 bits (attention.hpp's contract for them).
void attention_forward(std::span<float> out, std::span<std::uint16_t> att_bf16, std::span<const std::uint16_t> qkv_bf16,
                       std::int64_t B, std::int64_t T, std::int64_t C, std::int64_t H);
void attention_backward(std::span<float> dqkv, std::span<float> datt, std::span<const float> dout,
                        std::span<const std::uint16_t> qkv_bf16, std::span<const std::uint16_t> att_bf16,
                        std::int64_t B, std::int64_t T, std::int64_t C, std::int64_t H);

void gelu_forward(std::span<float> out, std::span<const float> inp);
void gelu_backward(std::span<float> dinp, std::span<const float> inp, std::span<const float> dout);
// The same with inp stored as bf16 bits.
void gelu_forward(std::span<float> out, std::span<const std::uint16_t> inp_bf16);
void gelu_backward(std::span<float> dinp, std::span<const std::uint16_t> inp_bf16, std::span<const float> dout);

void residual_add(std::span<float> out, std::span<const float> a, std::span<const float> b);

void cross_entropy_forward(std::span<float> losses, std::span<const float> logits,
                           std::span<const std::int32_t> targets, std::int64_t N, std::int64_t V);
void cross_entropy_forward_backward(std::span<float> losses, std::span<float> dlogits, std::span<const float> logits,
                                    std::span<const std::int32_t> targets, std::int64_t N, std::int64_t V, float scale);

// bf16: the products' operands rounded to bfloat16, multiplied on the tensor cores with fp32
// accumulation (precision.hpp).
void linear_forward(std::span<float> out, std::span<const float> inp, std::span<const float> weight,
                    std::span<const float> bias, std::int64_t N, std::int64_t IC, std::int64_t OC, bool bf16);
void linear_backward(std::span<float> dinp, std::span<float> dweight, std::span<float> dbias,
                     std::span<const float> dout, std::span<const float> inp, std::span<const float> weight,
                     std::int64_t N, std::int64_t IC, std::int64_t OC, bool bf16);
// The same with the input stored as bf16 bits (bf16 products).
void linear_forward(std::span<float> out, std::span<const std::uint16_t> inp_bf16, std::span<const float> weight,
                    std::span<const float> bias, std::int64_t N, std::int64_t IC, std::int64_t OC);
void linear_backward(std::span<float> dinp, std::span<float> dweight, std::span<float> dbias,
                     std::span<const float> dout, std::span<const std::uint16_t> inp_bf16,
                     std::span<const float> weight, std::int64_t N, std::int64_t IC, std::int64_t OC);

}  // namespace lowcomm::kernels::cuda_backend
