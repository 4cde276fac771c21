// The model's kernels on the CUDA backend (kernels/cuda/cuda_backend.hpp), and the managed
// buffers, fill and sign the model and the strategies use with them, against the Reference, on
// awkward sizes (a prime sequence length, widths no multiple of the warp size, a vocabulary of
// 1001, rows longer than a block and more rows than the grid has blocks): within float rounding
// of the Reference (parallel reductions and cuBLAS's products sum in other orders), with outputs
// that accumulate pre-filled so that += is checked, the in-place forms the model uses, and two
// runs giving the same bits. Built in the CUDA configuration only; every test skips, saying why,
// where no device is usable.
//
// Tolerances: |cuda − ref| ≤ rtol · (|ref| + RMS(ref)), rtol 1e-5 for the element-wise kernels and
// the row reductions, 1e-4 for the products and attention (sums of up to a few hundred terms in a
// different order).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "lowcomm/kernels/attention.hpp"
#include "lowcomm/kernels/backend.hpp"
#include "lowcomm/kernels/cross_entropy.hpp"
#include "lowcomm/kernels/elementwise.hpp"
#include "lowcomm/kernels/embedding.hpp"
#include "lowcomm/kernels/float16.hpp"
#include "lowcomm/kernels/gelu.hpp"
#include "lowcomm/kernels/layernorm.hpp"
#include "lowcomm/kernels/linear.hpp"
#include "lowcomm/kernels/memory.hpp"
#include "lowcomm/kernels/residual.hpp"
#include "transformer_test_support.hpp"

namespace lowcomm::kernels {
namespace {

using test::expect_close;
using test::Floats;
using test::random;
using test::random_ids;
constexpr Backend kRef = Backend::Reference;
constexpr Backend kCuda = Backend::Cuda;

class CudaModelKernels : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const std::string reason = unavailable_reason(kCuda); !reason.empty()) GTEST_SKIP() << reason;
  }
};

TEST_F(CudaModelKernels, ResidualAndGelu) {
  for (const std::int64_t n : {1, 31, 1000003}) {
    const Floats a = random(n, 1), b = random(n, 2), dout = random(n, 3);
    Floats ref(n), cuda(n);
    residual_add(kRef, ref, a, b);
    residual_add(kCuda, cuda, a, b);
    expect_close(cuda, ref, 1e-6, "residual_add");
    gelu_forward(kRef, ref, a);
    gelu_forward(kCuda, cuda, a);
    expect_close(cuda, ref, 1e-5, "gelu_forward");
    gelu_backward(kRef, ref, a, dout);
    gelu_backward(kCuda, cuda, a, dout);
    expect_close(cuda, ref, 1e-5, "gelu_backward");
    Floats in_place = dout;  // the model's form: dinp is dout
    gelu_backward(kCuda, in_place, a, in_place);
    expect_close(in_place, ref, 1e-5, "gelu_backward in place");
  }
}

TEST_F(CudaModelKernels, EmbeddingForwardAndAccumulatingBackward) {
  const std::int64_t B = 3, T = 7, C = 37, V = 11;
  const auto tokens = random_ids(B * T, V, 4);
  const Floats wte = random(V * C, 5), wpe = random(16 * C, 6), dout = random(B * T * C, 7);
  Floats ref(B * T * C), cuda(B * T * C);
  embedding_forward(kRef, ref, tokens, wte, wpe, B, T, C, V);
  embedding_forward(kCuda, cuda, tokens, wte, wpe, B, T, C, V);
  expect_close(cuda, ref, 1e-6, "embedding_forward");
  Floats dwte_ref = random(V * C, 8), dwpe_ref = random(16 * C, 9);
  Floats dwte = dwte_ref, dwpe = dwpe_ref;
  embedding_backward(kRef, dwte_ref, dwpe_ref, dout, tokens, B, T, C, V);
  embedding_backward(kCuda, dwte, dwpe, dout, tokens, B, T, C, V);
  expect_close(dwte, dwte_ref, 1e-5, "dwte");
  expect_close(dwpe, dwpe_ref, 1e-5, "dwpe");
}

// The Reference's normalisation, (x − mean) · rstd · weight + bias, at given row statistics.
Floats normalised(const Floats& inp, const Floats& mean, const Floats& rstd, const Floats& weight, const Floats& bias,
                  std::int64_t N, std::int64_t C) {
  Floats out(inp.size());
  for (std::int64_t n = 0; n < N; ++n) {
    for (std::int64_t c = 0; c < C; ++c) out[n * C + c] = (inp[n * C + c] - mean[n]) * rstd[n] * weight[c] + bias[c];
  }
  return out;
}

TEST_F(CudaModelKernels, LayerNormForwardAndAccumulatingBackward) {
  // 70000 rows: more than the grid's 65536 blocks, so blocks take several rows.
  for (const auto [N, C] : {std::pair<std::int64_t, std::int64_t>{1, 1}, {37, 24}, {5, 769}, {70000, 3}}) {
    const Floats inp = random(N * C, 10, 2.0f), w = random(C, 11), b = random(C, 12), dout = random(N * C, 13);
    Floats out_ref(N * C), mean_ref(N), rstd_ref(N), out(N * C), mean(N), rstd(N);
    layernorm_forward(kRef, out_ref, mean_ref, rstd_ref, inp, w, b, N, C);
    layernorm_forward(kCuda, out, mean, rstd, inp, w, b, N, C);
    expect_close(mean, mean_ref, 1e-5, "layernorm mean");
    expect_close(rstd, rstd_ref, 1e-5, "layernorm rstd");
    // out against the Reference's formula at the GPU's own statistics: a row whose values nearly
    // agree has a large rstd, which magnifies the mean's last-bit difference (the two sum in
    // different orders) far beyond float rounding of out, as it would between any two orders.
    expect_close(out, normalised(inp, mean, rstd, w, b, N, C), 1e-6, "layernorm out at its own mean and rstd");
    Floats dinp_ref = random(N * C, 14), dw_ref = random(C, 15), db_ref = random(C, 16);
    Floats dinp = dinp_ref, dw = dw_ref, db = db_ref;
    layernorm_backward(kRef, dinp_ref, dw_ref, db_ref, dout, inp, w, mean_ref, rstd_ref, N, C);
    layernorm_backward(kCuda, dinp, dw, db, dout, inp, w, mean_ref, rstd_ref, N, C);
    expect_close(dinp, dinp_ref, 1e-5, "layernorm dinp");
    expect_close(dw, dw_ref, 1e-5, "layernorm dweight");
    expect_close(db, db_ref, 1e-5, "layernorm dbias");
  }
}

TEST_F(CudaModelKernels, LinearWithAndWithoutBiasInFp32AndBf16) {
  for (const auto [N, IC, OC] : {std::tuple<std::int64_t, std::int64_t, std::int64_t>{1, 1, 1}, {37, 24, 72}, {13, 65, 3}}) {
    for (const bool with_bias : {false, true}) {
      SCOPED_TRACE(testing::Message() << N << "x" << IC << "->" << OC << (with_bias ? " bias" : ""));
      const Floats inp = random(N * IC, 20), w = random(OC * IC, 21), dout = random(N * OC, 22);
      const Floats bias = with_bias ? random(OC, 23) : Floats();
      Floats out_ref(N * OC), out(N * OC, 99.0f);  // out is overwritten
      linear_forward(kRef, out_ref, inp, w, bias, N, IC, OC);
      linear_forward(kCuda, out, inp, w, bias, N, IC, OC);
      expect_close(out, out_ref, 1e-4, "linear out");
      Floats dinp_ref(N * IC), dw_ref = random(OC * IC, 24), db_ref = random(OC, 25);
      Floats dinp(N * IC, 99.0f), dw = dw_ref, db = db_ref;
      const auto bias_grad = [&](Floats& g) { return with_bias ? std::span<float>(g) : std::span<float>(); };
      linear_backward(kRef, dinp_ref, dw_ref, bias_grad(db_ref), dout, inp, w, N, IC, OC);
      linear_backward(kCuda, dinp, dw, bias_grad(db), dout, inp, w, N, IC, OC);
      expect_close(dinp, dinp_ref, 1e-4, "linear dinp");
      expect_close(dw, dw_ref, 1e-4, "linear dweight");
      expect_close(db, db_ref, 1e-4, "linear dbias");

      // bf16 products: the same rounded operands, multiplied on the tensor cores, fp32 sums.
      const Precision bf16 = Precision::Bf16;
      linear_forward(kRef, out_ref, inp, w, bias, N, IC, OC, bf16);
      linear_forward(kCuda, out, inp, w, bias, N, IC, OC, bf16);
      expect_close(out, out_ref, 1e-4, "bf16 linear out");
      linear_backward(kRef, dinp_ref, dw_ref, bias_grad(db_ref), dout, inp, w, N, IC, OC, bf16);
      linear_backward(kCuda, dinp, dw, bias_grad(db), dout, inp, w, N, IC, OC, bf16);
      expect_close(dinp, dinp_ref, 1e-4, "bf16 linear dinp");
      expect_close(dw, dw_ref, 1e-4, "bf16 linear dweight");
      expect_close(db, db_ref, 1e-4, "bf16 linear dbias");

      // The input stored as bf16 bits goes to the tensor cores as it is: the same products.
      std::vector<std::uint16_t> bits(inp.size());
      for (std::size_t i = 0; i < inp.size(); ++i) bits[i] = kernels::float_to_bf16(inp[i]);
      const std::span<const std::uint16_t> stored(bits);
      Floats out_stored(N * OC, 99.0f), dinp_stored(N * IC, 99.0f), dw_stored = random(OC * IC, 24);
      Floats db_stored = random(OC, 25), dw_start = dw_stored, db_start = db_stored;
      linear_forward(kCuda, out_stored, stored, w, bias, N, IC, OC);
      expect_close(out_stored, out_ref, 1e-4, "bf16-stored linear out");
      EXPECT_EQ(out_stored, out) << "the same bf16 operands as the fp32 input's rounded copy";
      Floats dinp_expected(N * IC), dw_expected = dw_start, db_expected = db_start;
      linear_backward(kRef, dinp_expected, dw_expected, bias_grad(db_expected), dout, inp, w, N, IC, OC, bf16);
      linear_backward(kCuda, dinp_stored, dw_stored, bias_grad(db_stored), dout, stored, w, N, IC, OC);
      expect_close(dinp_stored, dinp_expected, 1e-4, "bf16-stored linear dinp");
      expect_close(dw_stored, dw_expected, 1e-4, "bf16-stored linear dweight");
      expect_close(db_stored, db_expected, 1e-4, "bf16-stored linear dbias");
      Floats dinp_fp32_input(N * IC, 99.0f), dw_fp32_input = dw_start, db_fp32_input = db_start;
      linear_backward(kCuda, dinp_fp32_input, dw_fp32_input, bias_grad(db_fp32_input), dout, inp, w, N, IC, OC, bf16);
      EXPECT_EQ(dinp_stored, dinp_fp32_input);
      EXPECT_EQ(dw_stored, dw_fp32_input);
      EXPECT_EQ(db_stored, db_fp32_input);
    }
  }
}

// The parameter gradients' column sums run in row chunks (kernels/cuda/cuda_column_sums.cuh):
// enough rows for many chunks, and for the most chunks (4096, longer chunks past that), against
// sums in double.
TEST_F(CudaModelKernels, ParameterGradientSumsOverManyRowChunks) {
  for (const std::int64_t N : {std::int64_t{1000}, std::int64_t{270001}}) {
    SCOPED_TRACE(testing::Message() << N << " rows");
    const std::int64_t OC = 5, IC = 1;
    const Floats dout = random(N * OC, 26), inp = random(N * IC, 27), w = random(OC * IC, 28);
    Floats dinp(N * IC), dw(OC * IC, 0.0f), db = random(OC, 29), expected(OC);
    for (std::int64_t o = 0; o < OC; ++o) {
      double sum = db[o];
      for (std::int64_t n = 0; n < N; ++n) sum += dout[n * OC + o];
      expected[o] = static_cast<float>(sum);
    }
    linear_backward(kCuda, dinp, dw, db, dout, inp, w, N, IC, OC);
    for (std::int64_t o = 0; o < OC; ++o) EXPECT_NEAR(db[o], expected[o], 1e-5 * std::sqrt(double(N))) << o;

    const std::int64_t C = N > 100000 ? 3 : 40;
    const Floats x = random(N * C, 30), dy = random(N * C, 31), gamma = random(C, 32), beta = random(C, 33);
    Floats out(N * C), mean(N), rstd(N);
    layernorm_forward(kRef, out, mean, rstd, x, gamma, beta, N, C);
    Floats dx_ref(N * C, 0.0f), dw_ref(C, 0.0f), db_ref(C, 0.0f), dx = dx_ref, dgamma = dw_ref, dbeta = db_ref;
    layernorm_backward(kRef, dx_ref, dw_ref, db_ref, dy, x, gamma, mean, rstd, N, C);
    layernorm_backward(kCuda, dx, dgamma, dbeta, dy, x, gamma, mean, rstd, N, C);
    // Against sums in double, as the bias above: the Reference's own float sums in row order drift
    // by about 1e-4 of the total over 270001 rows, more than the chunked sums do.
    for (std::int64_t c = 0; c < C; ++c) {
      double dgamma_sum = 0, dbeta_sum = 0;
      for (std::int64_t n = 0; n < N; ++n) {
        const float normalised_x = (x[n * C + c] - mean[n]) * rstd[n];
        dgamma_sum += double{dy[n * C + c]} * normalised_x;
        dbeta_sum += dy[n * C + c];
      }
      EXPECT_NEAR(dgamma[c], dgamma_sum, 1e-5 * std::sqrt(double(N))) << "layernorm dweight over chunks at " << c;
      EXPECT_NEAR(dbeta[c], dbeta_sum, 1e-5 * std::sqrt(double(N))) << "layernorm dbias over chunks at " << c;
    }
  }
}

TEST_F(CudaModelKernels, CausalAttentionForwardAndBackward) {
  // T = 300: rows longer than a block's 256 threads, so threads take several columns.
  for (const auto [B, T, C, H] : {std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t>{1, 1, 4, 1},
                                  {2, 13, 24, 3}, {1, 64, 96, 4}, {1, 300, 8, 2}}) {
    SCOPED_TRACE(testing::Message() << "B " << B << " T " << T << " C " << C << " H " << H);
    const Floats qkv = random(B * T * 3 * C, 30), dout = random(B * T * C, 31);
    Floats out_ref(B * T * C), att_ref(B * H * T * T), out(B * T * C), att(B * H * T * T);
    attention_forward(kRef, out_ref, att_ref, qkv, B, T, C, H);
    attention_forward(kCuda, out, att, qkv, B, T, C, H);
    expect_close(out, out_ref, 1e-4, "attention out");
    expect_close(att, att_ref, 1e-4, "attention att");
    Floats dqkv_ref(B * T * 3 * C), datt(B * H * T * T), dqkv(B * T * 3 * C, 99.0f);
    attention_backward(kRef, dqkv_ref, datt, dout, qkv, att_ref, B, T, C, H);
    attention_backward(kCuda, dqkv, datt, dout, qkv, att_ref, B, T, C, H);
    expect_close(dqkv, dqkv_ref, 1e-4, "attention dqkv");
  }
}

TEST_F(CudaModelKernels, CrossEntropyFusedAndInPlace) {
  const std::int64_t N = 37, V = 1001;
  Floats logits = random(N * V, 40, 4.0f);
  logits[5] = 80.0f;  // large logits: the max subtraction keeps exp finite
  const auto targets = random_ids(N, V, 41);
  Floats losses_ref(N), dlogits_ref(N * V), losses(N), dlogits(N * V);
  cross_entropy_forward(kRef, losses_ref, logits, targets, N, V);
  cross_entropy_forward(kCuda, losses, logits, targets, N, V);
  expect_close(losses, losses_ref, 1e-5, "losses");
  cross_entropy_forward_backward(kRef, losses_ref, dlogits_ref, logits, targets, N, V, 1.0f / N);
  cross_entropy_forward_backward(kCuda, losses, dlogits, logits, targets, N, V, 1.0f / N);
  expect_close(losses, losses_ref, 1e-5, "fused losses");
  expect_close(dlogits, dlogits_ref, 1e-5, "dlogits");
  Floats in_place = logits;  // the model's form: dlogits written over the logits
  cross_entropy_forward_backward(kCuda, losses, in_place, in_place, targets, N, V, 1.0f / N);
  EXPECT_EQ(in_place, dlogits);
}

// Managed buffers start zeroed, are read and written by host code, and kernels compute on them in
// place; sign is the Reference's bit for bit.
TEST_F(CudaModelKernels, ManagedBuffersFillAndSign) {
  FloatBuffer buffer(kCuda, 1000003);
  EXPECT_TRUE(std::all_of(buffer.begin(), buffer.end(), [](float x) { return x == 0.0f; }));
  fill(kCuda, buffer, 3.0f);
  EXPECT_TRUE(std::all_of(buffer.begin(), buffer.end(), [](float x) { return x == 3.0f; }));
  Floats values = random(static_cast<std::int64_t>(buffer.size()), 50);
  values[0] = -0.0f;
  values[1] = std::nanf("");
  std::copy(values.begin(), values.end(), buffer.begin());  // host writes into managed memory
  Floats ref(values.size());
  sign(kRef, values, ref);
  sign(kCuda, buffer, buffer);  // in place, on the device, in managed memory
  EXPECT_TRUE(std::equal(buffer.begin(), buffer.end(), ref.begin(), ref.end(),
                         [](float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }));
}

TEST_F(CudaModelKernels, Bf16StorageFormsOfGeluAndAttention) { test::expect_bf16_storage_forms(kCuda, 1e-4, "on cuda"); }

TEST_F(CudaModelKernels, RunsAreBitwiseRepeatable) { test::expect_runs_bitwise_repeatable(kCuda); }

}  // namespace
}  // namespace lowcomm::kernels
