// PowerSGD's linear algebra (linalg.hpp) on the GPU: the row-major GEMM on cuBLAS, and modified
// Gram-Schmidt in kernels of our own that take every sum in the Reference's order, one thread per
// sum, so that (with --fmad=false) its bits are the Reference's. Also the cuBLAS handle, checks and
// row-major product that dct.cu shares (cuda_blas.cuh). Messages are built with std::string: fmt
// 9's compile-time format strings do not build under nvcc.
#include <cmath>
#include <cstdlib>
#include <span>
#include <string>
#include <string_view>

#include "cuda_blas.cuh"
#include "cuda_memory.cuh"
#include "lowcomm/error.hpp"

namespace lowcomm::kernels::cuda_backend {

void check(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw Error(std::string("cuBLAS: ") + what + " failed: " + cublasGetStatusName(status));
  }
}

cublasHandle_t blas_handle() {
  // stream() first on every call: it selects the process's device on this thread, the one the
  // handle belongs to.
  const cudaStream_t queue = stream();
  // Never destroyed: at exit, cublasDestroy could run after the CUDA runtime has shut down. A
  // creation that throws leaves the static unset, to be tried again on the next call.
  static const cublasHandle_t handle = [queue] {
    cublasHandle_t made = nullptr;
    check(cublasCreate(&made), "cublasCreate");
    if (const cublasStatus_t bound = cublasSetStream(made, queue); bound != CUBLAS_STATUS_SUCCESS) {
      cublasDestroy(made);
      check(bound, "cublasSetStream");
    }
    return made;
  }();
  return handle;
}

// cuBLAS is column-major, and a row-major r × c matrix is, in the same memory, the column-major
// c × r matrix of its transpose. So C = op(A)·op(B) is computed as Cᵀ = op(B)ᵀ·op(A)ᵀ: B first,
// each operand transposed by cuBLAS exactly when it is by the caller, and every leading dimension
// the row length of the matrix as stored. The 64-bit interface takes the int64 sizes as they are.
void row_major_gemm(bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
                    const float* a, std::int64_t stride_a, const float* b, std::int64_t stride_b, float beta,
                    float* c, std::int64_t stride_c, std::int64_t batch) {
  const cublasOperation_t op_a = transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_b = transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const std::int64_t row_a = transpose_a ? m : k;
  const std::int64_t row_b = transpose_b ? k : n;
  const cublasHandle_t handle = blas_handle();
  if (batch == 1) {
    check(cublasSgemm_64(handle, op_b, op_a, n, m, k, &alpha, b, row_b, a, row_a, &beta, c, n), "cublasSgemm_64");
  } else {
    check(cublasSgemmStridedBatched_64(handle, op_b, op_a, n, m, k, &alpha, b, row_b, stride_b, a, row_a, stride_a,
                                       &beta, c, n, stride_c, batch),
          "cublasSgemmStridedBatched_64");
  }
}

// The tensor cores (CUBLAS_COMPUTE_32F) add the bf16 products in an order and with an alignment of
// their own, not as fp32 additions one by one; seen on an H200, that moves a bf16 model's stored
// activations across bf16 rounding boundaries often enough to put its logits 0.16 of the way from
// PyTorch's bf16 result towards its fp32 one (rms). LOWCOMM_CUDA_BF16_PEDANTIC=1 asks cuBLAS for
// CUBLAS_COMPUTE_32F_PEDANTIC instead, which matched PyTorch's host result to 2e-7: for checking a
// bf16 run against a reference, at the tensor cores' speed lost. Read at every product, so a test
// can switch it.
static cublasComputeType_t bf16_compute_type() {
  const char* pedantic = std::getenv("LOWCOMM_CUDA_BF16_PEDANTIC");
  const bool on = pedantic != nullptr && *pedantic != '\0' && std::string_view(pedantic) != "0";
  return on ? CUBLAS_COMPUTE_32F_PEDANTIC : CUBLAS_COMPUTE_32F;
}

void row_major_gemm_bf16(bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n, std::int64_t k,
                         float alpha, const std::uint16_t* a, const std::uint16_t* b, float beta, float* c) {
  const cublasOperation_t op_a = transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_b = transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const std::int64_t row_a = transpose_a ? m : k;
  const std::int64_t row_b = transpose_b ? k : n;
  check(cublasGemmEx_64(blas_handle(), op_b, op_a, n, m, k, &alpha, b, CUDA_R_16BF, row_b, a, CUDA_R_16BF, row_a,
                        &beta, c, CUDA_R_32F, n, bf16_compute_type(), CUBLAS_GEMM_DEFAULT),
        "cublasGemmEx_64 (bf16)");
}

namespace {

// C = alpha·0 + beta·C, the Reference's formula for an empty sum (alpha·0 when beta == 0, C
// unread), rather than whatever a BLAS does with k == 0.
__global__ void empty_product(float alpha, float beta, std::int64_t count, float* c) {
  for (std::int64_t e = first_item(); e < count; e += item_stride()) {
    const float product = alpha * 0.0f;
    c[e] = beta == 0.0f ? product : product + beta * c[e];
  }
}

// Column i divided by ‖p_i‖ + epsilon. One block: its first thread sums the squares down the rows
// (the Reference's order) while the others wait, then all of them divide.
__global__ void normalise_column(float* p, std::int64_t rows, std::int64_t cols, std::int64_t i, float epsilon) {
  __shared__ float divisor;
  if (threadIdx.x == 0) {
    float squares = 0.0f;
    for (std::int64_t r = 0; r < rows; ++r) squares += p[r * cols + i] * p[r * cols + i];
    divisor = sqrtf(squares) + epsilon;
  }
  __syncthreads();
  for (std::int64_t r = threadIdx.x; r < rows; r += blockDim.x) p[r * cols + i] /= divisor;
}

// dots[j] = ⟨p_i, p_j⟩ for every j > i, each summed down the rows by one thread. Only column j's
// own update changes p_j, so computing them all before any update is the Reference's arithmetic.
__global__ void column_dots(const float* p, std::int64_t rows, std::int64_t cols, std::int64_t i, float* dots) {
  for (std::int64_t e = first_item(); e < cols - i - 1; e += item_stride()) {
    const std::int64_t j = i + 1 + e;
    float dot = 0.0f;
    for (std::int64_t r = 0; r < rows; ++r) dot += p[r * cols + i] * p[r * cols + j];
    dots[j] = dot;
  }
}

// p_j ← p_j − dots[j]·p_i for every j > i, one element per thread.
__global__ void subtract_projections(float* p, std::int64_t rows, std::int64_t cols, std::int64_t i,
                                     const float* dots) {
  const std::int64_t later = cols - i - 1;
  for (std::int64_t e = first_item(); e < rows * later; e += item_stride()) {
    const std::int64_t r = e / later, j = i + 1 + e % later;
    p[r * cols + j] -= dots[j] * p[r * cols + i];
  }
}

}  // namespace

const char* gemm_provider() {
  // Built once. cublasGetProperty needs neither a handle nor a device, so `lowcomm info` can print
  // this anywhere; nothing here may throw.
  static const std::string versioned = [] {
    int major = 0, minor = 0, patch = 0;
    const bool known = cublasGetProperty(MAJOR_VERSION, &major) == CUBLAS_STATUS_SUCCESS &&
                       cublasGetProperty(MINOR_VERSION, &minor) == CUBLAS_STATUS_SUCCESS &&
                       cublasGetProperty(PATCH_LEVEL, &patch) == CUBLAS_STATUS_SUCCESS;
    try {
      return known ? "cuBLAS " + std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch)
                   : std::string();
    } catch (...) {
      return std::string();
    }
  }();
  return versioned.empty() ? "cuBLAS" : versioned.c_str();
}

void gemm(bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
          std::span<const float> a, std::span<const float> b, float beta, std::span<float> c) {
  if (m == 0 || n == 0) return;  // C is empty
  // As in BLAS, beta == 0 overwrites C without reading it, so NaNs there cannot propagate: it is
  // not even copied to the device.
  Output<float> result(c, /*initialised=*/beta != 0.0f);
  if (k == 0) {
    launch("gemm (k = 0)", empty_product, m * n, alpha, beta, m * n, result.data());
  } else {
    const Input<float> av(a);
    const Input<float> bv(b);
    row_major_gemm(transpose_a, transpose_b, m, n, k, alpha, av.data(), 0, bv.data(), 0, beta, result.data(), 0, 1);
  }
  result.finish();
}

// Column after column, as the Reference: its norm and normalisation, then every later column's
// dot product with it (side by side), then the projections subtracted.
void orthonormalize_columns(std::span<float> matrix, std::int64_t rows, std::int64_t cols, float epsilon) {
  if (rows == 0 || cols == 0) return;
  Output<float> result(matrix, /*initialised=*/true);
  float* p = result.data();
  const DeviceBuffer<float> dots(static_cast<std::size_t>(cols));
  for (std::int64_t i = 0; i < cols; ++i) {
    normalise_column<<<1, kThreads, 0, stream()>>>(p, rows, cols, i, epsilon);
    check(cudaGetLastError(), "orthonormalize_columns (normalise)");
    if (i + 1 == cols) break;
    const std::int64_t later = cols - i - 1;
    launch("orthonormalize_columns (dots)", column_dots, later, p, rows, cols, i, dots.data());
    launch("orthonormalize_columns (project)", subtract_projections, rows * later, p, rows, cols, i, dots.data());
  }
  result.finish();
}

}  // namespace lowcomm::kernels::cuda_backend
