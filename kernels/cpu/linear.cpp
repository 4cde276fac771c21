// linear.hpp on the Cpu backend. Its three products in BLAS terms, all row-major (weight is
// OC × IC as nn.Linear stores it):
//   forward  out   (N × OC)  = inp (N × IC) · weightᵀ          [+ bias broadcast over rows]
//   backward dinp  (N × IC)  = dout (N × OC) · weight
//            dW    (OC × IC) += doutᵀ · inp
// handed to the kernels' one matrix product (blas.hpp: OpenBLAS, else Eigen). The bias reduction
// is ours: rows in order, columns split between threads. In bf16 the products take the rounded
// copies of ../linear_operands.hpp, converted on the threads too.
#include <omp.h>

#include <algorithm>
#include <vector>

#include "../backend_kernels.hpp"
#include "../linear_operands.hpp"
#include "blas.hpp"

namespace lowcomm::kernels::cpu_backend {

namespace {

// C ← op(A) · op(B) + beta · C through the kernels' one matrix product (blas.hpp).
void sgemm(bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n, std::int64_t k,
           const float* a, const float* b, float beta, float* c) {
  detail::sgemm(transpose_a, transpose_b, m, n, k, 1.0f, a, b, beta, c);
}

// dbias += Σ_rows dout, columns split between the threads.
void bias_grad_cpu(float* dbias, const float* dout, std::int64_t N, std::int64_t OC) {
#pragma omp parallel
  {
    const std::int64_t threads = omp_get_num_threads();
    const std::int64_t id = omp_get_thread_num();
    detail::linear_bias_grad_columns(dbias, dout, N, OC, OC * id / threads, OC * (id + 1) / threads);
  }
}

void forward_cpu(float* out, const float* inp, const float* weight, const float* bias,
                 std::int64_t N, std::int64_t IC, std::int64_t OC) {
  if (N == 0 || OC == 0) return;
  if (bias != nullptr) {
    // Start from the bias and let the product accumulate onto it (beta = 1): no second pass.
#pragma omp parallel for schedule(static)
    for (std::int64_t n = 0; n < N; ++n) std::copy(bias, bias + OC, out + n * OC);
  }
  if (IC == 0) {
    if (bias == nullptr) std::fill(out, out + N * OC, 0.0f);
    return;
  }
  sgemm(false, true, N, OC, IC, inp, weight, bias != nullptr ? 1.0f : 0.0f, out);
}

// The two products of the backward pass; backward() adds the bias gradient.
void backward_cpu(float* dinp, float* dweight, const float* dout, const float* inp, const float* weight,
                  std::int64_t N, std::int64_t IC, std::int64_t OC) {
  if (dinp != nullptr && N > 0 && IC > 0) {
    if (OC == 0) {
      std::fill(dinp, dinp + N * IC, 0.0f);
    } else {
      sgemm(false, false, N, IC, OC, dout, weight, 0.0f, dinp);
    }
  }
  if (OC > 0 && IC > 0 && N > 0) sgemm(true, false, OC, IC, N, dout, inp, 1.0f, dweight);
}

template <class Stored>
void forward(std::span<float> out, std::span<const Stored> inp, std::span<const float> weight,
             std::span<const float> bias, std::int64_t N, std::int64_t IC, std::int64_t OC, bool bf16) {
  const float* b = bias.empty() ? nullptr : bias.data();
  detail::with_linear_forward_operands(inp, weight, bf16, true, [&](const float* x, const float* w) {
    forward_cpu(out.data(), x, w, b, N, IC, OC);
  });
}

template <class Stored>
void backward(std::span<float> dinp, std::span<float> dweight, std::span<float> dbias, std::span<const float> dout,
              std::span<const Stored> inp, std::span<const float> weight, std::int64_t N, std::int64_t IC,
              std::int64_t OC, bool bf16) {
  float* di = dinp.empty() ? nullptr : dinp.data();
  float* db = dbias.empty() ? nullptr : dbias.data();
  detail::with_linear_backward_operands(dout, inp, weight, bf16, true,
                                        [&](const float* dy, const float* x, const float* w) {
                                          backward_cpu(di, dweight.data(), dy, x, w, N, IC, OC);
                                        });
  if (db != nullptr) bias_grad_cpu(db, dout.data(), N, OC);
}

}  // namespace

void linear_forward(std::span<float> out, std::span<const float> inp, std::span<const float> weight,
                    std::span<const float> bias, std::int64_t N, std::int64_t IC, std::int64_t OC, bool bf16) {
  forward(out, inp, weight, bias, N, IC, OC, bf16);
}

void linear_forward(std::span<float> out, std::span<const std::uint16_t> inp_bf16, std::span<const float> weight,
                    std::span<const float> bias, std::int64_t N, std::int64_t IC, std::int64_t OC) {
  forward(out, inp_bf16, weight, bias, N, IC, OC, true);
}

void linear_backward(std::span<float> dinp, std::span<float> dweight, std::span<float> dbias,
                     std::span<const float> dout, std::span<const float> inp, std::span<const float> weight,
                     std::int64_t N, std::int64_t IC, std::int64_t OC, bool bf16) {
  backward(dinp, dweight, dbias, dout, inp, weight, N, IC, OC, bf16);
}

void linear_backward(std::span<float> dinp, std::span<float> dweight, std::span<float> dbias,
                     std::span<const float> dout, std::span<const std::uint16_t> inp_bf16,
                     std::span<const float> weight, std::int64_t N, std::int64_t IC, std::int64_t OC) {
  backward(dinp, dweight, dbias, dout, inp_bf16, weight, N, IC, OC, true);
}

}  // namespace lowcomm::kernels::cpu_backend
