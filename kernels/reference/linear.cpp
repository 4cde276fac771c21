// linear.hpp's definition: the three products as plain loops, in bf16 on the rounded copies of
// ../linear_operands.hpp, the bias gradient's rows in order.
#include "../backend_kernels.hpp"
#include "../linear_operands.hpp"

namespace lowcomm::kernels::reference_backend {

namespace {

void forward_reference(float* out, const float* inp, const float* weight, const float* bias,
                       std::int64_t N, std::int64_t IC, std::int64_t OC) {
  for (std::int64_t n = 0; n < N; ++n) {
    for (std::int64_t o = 0; o < OC; ++o) {
      float sum = 0.0f;
      for (std::int64_t i = 0; i < IC; ++i) sum += inp[n * IC + i] * weight[o * IC + i];
      out[n * OC + o] = bias != nullptr ? sum + bias[o] : sum;
    }
  }
}

// The two products of the backward pass; backward() adds the bias gradient.
void backward_reference(float* dinp, float* dweight, const float* dout, const float* inp,
                        const float* weight, std::int64_t N, std::int64_t IC, std::int64_t OC) {
  if (dinp != nullptr) {
    for (std::int64_t n = 0; n < N; ++n) {
      for (std::int64_t i = 0; i < IC; ++i) {
        float sum = 0.0f;
        for (std::int64_t o = 0; o < OC; ++o) sum += dout[n * OC + o] * weight[o * IC + i];
        dinp[n * IC + i] = sum;
      }
    }
  }
  for (std::int64_t o = 0; o < OC; ++o) {
    for (std::int64_t i = 0; i < IC; ++i) {
      float sum = 0.0f;
      for (std::int64_t n = 0; n < N; ++n) sum += dout[n * OC + o] * inp[n * IC + i];
      dweight[o * IC + i] += sum;
    }
  }
}

template <class Stored>
void forward(std::span<float> out, std::span<const Stored> inp, std::span<const float> weight,
             std::span<const float> bias, std::int64_t N, std::int64_t IC, std::int64_t OC, bool bf16) {
  const float* b = bias.empty() ? nullptr : bias.data();
  detail::with_linear_forward_operands(inp, weight, bf16, false, [&](const float* x, const float* w) {
    forward_reference(out.data(), x, w, b, N, IC, OC);
  });
}

template <class Stored>
void backward(std::span<float> dinp, std::span<float> dweight, std::span<float> dbias, std::span<const float> dout,
              std::span<const Stored> inp, std::span<const float> weight, std::int64_t N, std::int64_t IC,
              std::int64_t OC, bool bf16) {
  float* di = dinp.empty() ? nullptr : dinp.data();
  float* db = dbias.empty() ? nullptr : dbias.data();
  detail::with_linear_backward_operands(dout, inp, weight, bf16, false,
                                        [&](const float* dy, const float* x, const float* w) {
                                          backward_reference(di, dweight.data(), dy, x, w, N, IC, OC);
                                        });
  if (db != nullptr) detail::linear_bias_grad_columns(db, dout.data(), N, OC, 0, OC);
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

}  // namespace lowcomm::kernels::reference_backend
