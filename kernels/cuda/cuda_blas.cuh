#pragma once
// cuBLAS for the kernels/cuda sources that multiply matrices (dct.cu, linalg.cu, attention.cu,
// linear.cu): the process's handle, status checks, and the row-major product they build on.
// Defined in linalg.cu.
// Included by kernels/cuda/*.cu only.
#include <cublas_v2.h>

#include <cstdint>

#include "cuda_runtime.hpp"

namespace lowcomm::kernels::cuda_backend {

// The process's cuBLAS handle, made on first use on stream()'s device and bound to stream(), so
// that its products are ordered with the other kernels. Throws lowcomm::Error when no device is
// usable or cublasCreate fails.
cublasHandle_t blas_handle();

// Throws lowcomm::Error "cuBLAS: <what> failed: <status name>" unless status is
// CUBLAS_STATUS_SUCCESS.
void check(cublasStatus_t status, const char* what);

// C_b ← alpha · op(A_b) · op(B_b) + beta · C_b for b < batch, with linalg.hpp's gemm's row-major
// conventions (A_b stored k × m when transpose_a, B_b stored n × k when transpose_b, C_b m × n,
// each contiguous) and X_b = x + b · stride_x. m, n, k and batch are at least 1; beta == 0 does not
// read C. Device pointers; queued on stream(), not waited for.
void row_major_gemm(bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
                    const float* a, std::int64_t stride_a, const float* b, std::int64_t stride_b, float beta,
                    float* c, std::int64_t stride_c, std::int64_t batch);

// The same product (batch 1) with bfloat16 operands (bits as float16.hpp's float_to_bf16 gives
// them), fp32 alpha, beta and C, and fp32 accumulation (cublasGemmEx, CUBLAS_COMPUTE_32F: the
// tensor cores on sm_80 and later, which add in an order of their own; with the environment's
// LOWCOMM_CUDA_BF16_PEDANTIC=1, CUBLAS_COMPUTE_32F_PEDANTIC: linalg.cu says why).
void row_major_gemm_bf16(bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n, std::int64_t k,
                         float alpha, const std::uint16_t* a, const std::uint16_t* b, float beta, float* c);

}  // namespace lowcomm::kernels::cuda_backend
