// Fully connected layer (linear.hpp) on the GPU: its three products on cuBLAS, all row-major
// (weight is OC × IC as nn.Linear stores it), as kernels/cpu/linear.cpp's Cpu backend:
//   forward  out  (N × OC)  = inp (N × IC) · weightᵀ (OC × IC)ᵀ   [+ bias broadcast over rows]
//   backward dinp (N × IC)  = dout (N × OC) · weight (OC × IC)
//            dW   (OC × IC) += doutᵀ (N × OC)ᵀ · inp (N × IC)
// The bias is written into out first and the product accumulates onto it (beta = 1): sum + bias,
// the Reference's formula, without a second pass. The bias gradient is ours: one thread per
// output channel adds the rows in order, onto the channel's value, which is the Reference's
// summation bit for bit (--fmad=false) and needs no atomics. cuBLAS sums in an order of its own,
// so the products match the Reference within float rounding, the same bits run to run.
// Empty dimensions get the Reference's empty sums (zeros) instead of a product with k = 0.
#include <cstdint>
#include <span>

#include "cuda_blas.cuh"
#include "cuda_memory.cuh"
#include "cuda_model_kernels.hpp"

namespace lowcomm::kernels::cuda_backend {

namespace {

// out[n][o] = bias[o] for every row n.
__global__ void broadcast_bias(const float* bias, std::int64_t rows, std::int64_t channels, float* out) {
  for (std::int64_t e = first_item(); e < rows * channels; e += item_stride()) out[e] = bias[e % channels];
}

// dbias[o] += dout[n][o] for n = 0, 1, …, N − 1 in turn, one thread per channel o (neighbouring
// threads read neighbouring columns of a row: coalesced).
__global__ void add_column_sums(const float* dout, std::int64_t rows, std::int64_t channels, float* dbias) {
  for (std::int64_t o = first_item(); o < channels; o += item_stride()) {
    float sum = dbias[o];
    for (std::int64_t n = 0; n < rows; ++n) sum += dout[n * channels + o];
    dbias[o] = sum;
  }
}

}  // namespace

void linear_forward(std::span<float> out, std::span<const float> inp, std::span<const float> weight,
                    std::span<const float> bias, std::int64_t N, std::int64_t IC, std::int64_t OC) {
  if (out.empty()) return;  // N or OC is 0
  Output<float> result(out);
  if (!bias.empty()) {
    const Input<float> b(bias);
    launch("linear_forward (bias)", broadcast_bias, N * OC, b.data(), N, OC, result.data());
  } else if (IC == 0) {
    check(cudaMemsetAsync(result.data(), 0, out.size_bytes(), stream()), "cudaMemsetAsync (linear_forward)");
  }
  if (IC > 0) {
    const Input<float> x(inp);
    const Input<float> w(weight);
    // out (N × OC) = inp (N × IC) · weightᵀ, weight stored OC × IC: m = N, n = OC, k = IC.
    row_major_gemm(false, true, N, OC, IC, 1.0f, x.data(), 0, w.data(), 0, bias.empty() ? 0.0f : 1.0f,
                   result.data(), 0, 1);
  }
  result.finish();
}

void linear_backward(std::span<float> dinp, std::span<float> dweight, std::span<float> dbias,
                     std::span<const float> dout, std::span<const float> inp, std::span<const float> weight,
                     std::int64_t N, std::int64_t IC, std::int64_t OC) {
  const Input<float> dy(dout);
  if (!dinp.empty()) {  // N and IC are positive
    Output<float> dx(dinp);
    if (OC == 0) {
      check(cudaMemsetAsync(dx.data(), 0, dinp.size_bytes(), stream()), "cudaMemsetAsync (linear_backward)");
    } else {
      const Input<float> w(weight);
      // dinp (N × IC) = dout (N × OC) · weight (OC × IC): m = N, n = IC, k = OC.
      row_major_gemm(false, false, N, IC, OC, 1.0f, dy.data(), 0, w.data(), 0, 0.0f, dx.data(), 0, 1);
    }
    dx.finish();
  }
  // With N = 0 the sum is empty and dweight keeps its values.
  if (!dweight.empty() && N > 0) {
    const Input<float> x(inp);
    Output<float> dw(dweight, /*initialised=*/true);
    // dweight (OC × IC) += doutᵀ · inp, dout stored N × OC, inp N × IC: m = OC, n = IC, k = N.
    row_major_gemm(true, false, OC, IC, N, 1.0f, dy.data(), 0, x.data(), 0, 1.0f, dw.data(), 0, 1);
    dw.finish();
  }
  if (!dbias.empty() && N > 0) {
    Output<float> db(dbias, /*initialised=*/true);
    launch("linear_backward (bias)", add_column_sums, OC, dy.data(), N, OC, db.data());
    db.finish();
  }
}

}  // namespace lowcomm::kernels::cuda_backend
