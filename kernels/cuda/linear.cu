// Fully connected layer (linear.hpp) on the GPU: its three products on cuBLAS, all row-major
// (weight is OC × IC as nn.Linear stores it), as kernels/cpu/linear.cpp's Cpu backend:
//   forward  out  (N × OC)  = inp (N × IC) · weightᵀ (OC × IC)ᵀ   [+ bias broadcast over rows]
//   backward dinp (N × IC)  = dout (N × OC) · weight (OC × IC)
//            dW   (OC × IC) += doutᵀ (N × OC)ᵀ · inp (N × IC)
// The bias is written into out first and the product accumulates onto it (beta = 1): sum + bias,
// the Reference's formula, without a second pass. The bias gradient is ours: column sums of dout
// in cuda_column_sums.cuh's two deterministic passes, no atomics. cuBLAS sums in an order of its
// own, so the products match the Reference within float rounding, the same bits run to run; so
// does the bias gradient.
// Empty dimensions get the Reference's empty sums (zeros) instead of a product with k = 0.
// In bf16 each product's operands are first rounded into bfloat16 copies (float16.hpp's
// round-to-nearest-even, the host backends' rounding) and multiplied on the tensor cores with
// fp32 accumulation; the bias and its gradient stay fp32. An input stored as bf16 goes to the
// tensor cores as it is, with no copy.
#include <cstdint>
#include <span>

#include "cuda_blas.cuh"
#include "cuda_column_sums.cuh"
#include "cuda_convert.cuh"
#include "cuda_memory.cuh"
#include "cuda_backend.hpp"

namespace lowcomm::kernels::cuda_backend {

namespace {

// out[n][o] = bias[o] for every row n.
__global__ void broadcast_bias(const float* bias, std::int64_t rows, std::int64_t channels, float* out) {
  for (std::int64_t e = first_item(); e < rows * channels; e += item_stride()) out[e] = bias[e % channels];
}

// The terms of dbias[o] += Σ_n dout[n][o], for add_column_sums.
struct RowValues {
  const float* values;
  std::int64_t channels;
  __device__ void operator()(std::int64_t n, std::int64_t c, float (&term)[1]) const {
    term[0] = values[n * channels + c];
  }
};

// A product's operand, as it is multiplied: the values themselves in fp32, a rounded copy in bf16;
// or values stored as bf16, used as they are.
class Operand {
 public:
  Operand(std::span<const float> values, bool bf16) : values_(values), bits_({}) {
    if (!bf16 || values.empty()) return;
    rounded_ = DeviceBuffer<std::uint16_t>(values.size());
    const auto n = static_cast<std::int64_t>(values.size());
    launch("round_to_bf16", convert_values<float, std::uint16_t>, n, values_.data(), n, rounded_.data());
  }
  explicit Operand(std::span<const std::uint16_t> bits) : values_({}), bits_(bits) {}
  const float* fp32() const { return values_.data(); }
  const std::uint16_t* bf16() const { return rounded_.data() != nullptr ? rounded_.data() : bits_.data(); }

 private:
  Input<float> values_;
  Input<std::uint16_t> bits_;
  DeviceBuffer<std::uint16_t> rounded_;
};

// The input operand of a layer: fp32 values (rounded in bf16), or bf16 bits.
Operand input_operand(std::span<const float> inp, bool bf16) { return Operand(inp, bf16); }
Operand input_operand(std::span<const std::uint16_t> inp, bool) { return Operand(inp); }

// C (m × n) = op(A) · op(B) + beta·C in the operands' precision.
void product(bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n, std::int64_t k, const Operand& a,
             const Operand& b, float beta, float* c, bool bf16) {
  if (bf16) {
    row_major_gemm_bf16(transpose_a, transpose_b, m, n, k, 1.0f, a.bf16(), b.bf16(), beta, c);
  } else {
    row_major_gemm(transpose_a, transpose_b, m, n, k, 1.0f, a.fp32(), 0, b.fp32(), 0, beta, c, 0, 1);
  }
}

template <class Stored>
void forward(std::span<float> out, std::span<const Stored> inp, std::span<const float> weight,
             std::span<const float> bias, std::int64_t N, std::int64_t IC, std::int64_t OC, bool bf16) {
  if (out.empty()) return;  // N or OC is 0
  Output<float> result(out);
  if (!bias.empty()) {
    const Input<float> b(bias);
    launch("linear_forward (bias)", broadcast_bias, N * OC, b.data(), N, OC, result.data());
  } else if (IC == 0) {
    check(cudaMemsetAsync(result.data(), 0, out.size_bytes(), stream()), "cudaMemsetAsync (linear_forward)");
  }
  if (IC > 0) {
    const Operand x = input_operand(inp, bf16), w(weight, bf16);
    // out (N × OC) = inp (N × IC) · weightᵀ, weight stored OC × IC: m = N, n = OC, k = IC.
    product(false, true, N, OC, IC, x, w, bias.empty() ? 0.0f : 1.0f, result.data(), bf16);
  }
  result.finish();
}

template <class Stored>
void backward(std::span<float> dinp, std::span<float> dweight, std::span<float> dbias, std::span<const float> dout,
              std::span<const Stored> inp, std::span<const float> weight, std::int64_t N, std::int64_t IC,
              std::int64_t OC, bool bf16) {
  const Operand dy(dout, bf16);
  if (!dinp.empty()) {  // N and IC are positive
    Output<float> dx(dinp);
    if (OC == 0) {
      check(cudaMemsetAsync(dx.data(), 0, dinp.size_bytes(), stream()), "cudaMemsetAsync (linear_backward)");
    } else {
      const Operand w(weight, bf16);
      // dinp (N × IC) = dout (N × OC) · weight (OC × IC): m = N, n = IC, k = OC.
      product(false, false, N, IC, OC, dy, w, 0.0f, dx.data(), bf16);
    }
    dx.finish();
  }
  // With N = 0 the sum is empty and dweight keeps its values.
  if (!dweight.empty() && N > 0) {
    const Operand x = input_operand(inp, bf16);
    Output<float> dw(dweight, /*initialised=*/true);
    // dweight (OC × IC) += doutᵀ · inp, dout stored N × OC, inp N × IC: m = OC, n = IC, k = N.
    product(true, false, OC, IC, N, dy, x, 1.0f, dw.data(), bf16);
    dw.finish();
  }
  if (!dbias.empty() && N > 0) {
    Output<float> db(dbias, /*initialised=*/true);
    add_column_sums<1>("linear_backward (bias)", RowValues{dy.fp32(), OC}, N, OC, {db.data()});
    db.finish();
  }
}

}  // namespace

void linear_forward(std::span<float> out, std::span<const float> inp, std::span<const float> weight,
                    std::span<const float> bias, std::int64_t N, std::int64_t IC, std::int64_t OC, bool bf16) {
  forward(out, inp, weight, bias, N, IC, OC, bf16);
}

void linear_forward(std::span<float> out, std::span<const std::uint16_t> inp_bf16, std::span<const float> weight,
                    std::span<const float> bias, std::int64_t N, std::int64_t IC, std::int64_t OC) {
  forward(out, inp_bf16, weight, bias, N, IC, OC, /*bf16=*/true);
}

void linear_backward(std::span<float> dinp, std::span<float> dweight, std::span<float> dbias,
                     std::span<const float> dout, std::span<const float> inp, std::span<const float> weight,
                     std::int64_t N, std::int64_t IC, std::int64_t OC, bool bf16) {
  backward(dinp, dweight, dbias, dout, inp, weight, N, IC, OC, bf16);
}

void linear_backward(std::span<float> dinp, std::span<float> dweight, std::span<float> dbias,
                     std::span<const float> dout, std::span<const std::uint16_t> inp_bf16,
                     std::span<const float> weight, std::int64_t N, std::int64_t IC, std::int64_t OC) {
  backward(dinp, dweight, dbias, dout, inp_bf16, weight, N, IC, OC, /*bf16=*/true);
}

}  // namespace lowcomm::kernels::cuda_backend
