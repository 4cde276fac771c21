// The transformer kernels: each Cpu kernel against its Reference on random inputs of awkward
// sizes at 1, 2 and 3 OpenMP threads; every backward pass against central finite differences of
// its forward pass (Reference, float, on L = Σ w·out with random w, checking a sample of inputs);
// bitwise repeatability; and the errors.
//
// Finite-difference tolerance: with step h = 1e-2 on inputs of order 1 the truncation error is
// about h²·|f'''|/6 ≈ 1e-4 and float rounding of L adds about 1e-6 / h; we require
// |fd − analytic| ≤ 2e-3 · (1 + |analytic|), an order of magnitude above both.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <cstdint>
#include <array>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "lowcomm/error.hpp"
#include "lowcomm/kernels/attention.hpp"
#include "lowcomm/kernels/cross_entropy.hpp"
#include "lowcomm/kernels/embedding.hpp"
#include "lowcomm/kernels/float16.hpp"
#include "lowcomm/kernels/gelu.hpp"
#include "lowcomm/kernels/layernorm.hpp"
#include "lowcomm/kernels/linear.hpp"
#include "lowcomm/kernels/residual.hpp"
#include "transformer_test_support.hpp"

namespace lowcomm::kernels {
namespace {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;
using test::expect_close;
using test::Floats;
using test::random;
using test::random_ids;

class Threads {
 public:
  explicit Threads(int n) : saved_(omp_get_max_threads()) { omp_set_num_threads(n); }
  ~Threads() { omp_set_num_threads(saved_); }

 private:
  int saved_;
};

// Central differences of objective() with respect to a sample of x's entries against grad.
void check_gradient(Floats& x, const Floats& grad, const std::function<double()>& objective,
                    const std::string& what, int samples = 24) {
  ASSERT_EQ(x.size(), grad.size()) << what;
  std::mt19937 rng(7);
  std::uniform_int_distribution<std::size_t> pick(0, x.size() - 1);
  const float h = 1e-2f;
  for (int s = 0; s < samples && !x.empty(); ++s) {
    const std::size_t i = s < 4 && static_cast<std::size_t>(s) < x.size() ? static_cast<std::size_t>(s) : pick(rng);
    const float saved = x[i];
    x[i] = saved + h;
    const double up = objective();
    x[i] = saved - h;
    const double down = objective();
    x[i] = saved;
    const double fd = (up - down) / (2.0 * static_cast<double>(h));
    EXPECT_NEAR(fd, grad[i], 2e-3 * (1.0 + std::fabs(grad[i]))) << what << " entry " << i;
  }
}

double weighted(const Floats& out, const Floats& w) {
  double sum = 0;
  for (std::size_t i = 0; i < out.size(); ++i) sum += double{out[i]} * w[i];
  return sum;
}

// ---- residual add ------------------------------------------------------------------------------

TEST(ResidualAdd, CpuEqualsReferenceBitwise) {
  const auto a = random(1001, 1), b = random(1001, 2);
  Floats ref(1001), cpu(1001);
  residual_add(Backend::Reference, ref, a, b);
  for (int threads : {1, 2, 3}) {
    Threads t(threads);
    residual_add(Backend::Cpu, cpu, a, b);
    EXPECT_EQ(cpu, ref);
  }
  EXPECT_EQ(ref[5], a[5] + b[5]);
  Floats short_b(1000);
  EXPECT_THAT([&] { residual_add(Backend::Cpu, cpu, a, short_b); },
              ThrowsMessage<Error>(HasSubstr("residual_add: b holds 1000 floats, expected 1001")));
}

// ---- embedding ---------------------------------------------------------------------------------

TEST(Embedding, CpuEqualsReferenceAndGradientIsTheScatter) {
  const std::int64_t B = 3, T = 5, C = 13, V = 7, Tmax = 8;
  const auto tokens = random_ids(B * T, V, 3);
  const auto wte = random(V * C, 4), wpe = random(Tmax * C, 5), dout = random(B * T * C, 6);
  Floats ref(B * T * C), cpu(B * T * C);
  embedding_forward(Backend::Reference, ref, tokens, wte, wpe, B, T, C, V);
  EXPECT_EQ(ref[1 * C + 2], wte[tokens[1] * C + 2] + wpe[1 * C + 2]);
  Floats dwte_ref(V * C, 0.5f), dwpe_ref(Tmax * C, 0.25f);
  embedding_backward(Backend::Reference, dwte_ref, dwpe_ref, dout, tokens, B, T, C, V);
  for (int threads : {1, 2, 3}) {
    Threads t(threads);
    embedding_forward(Backend::Cpu, cpu, tokens, wte, wpe, B, T, C, V);
    EXPECT_EQ(cpu, ref);
    Floats dwte(V * C, 0.5f), dwpe(Tmax * C, 0.25f);
    embedding_backward(Backend::Cpu, dwte, dwpe, dout, tokens, B, T, C, V);
    EXPECT_EQ(dwte, dwte_ref);  // same (b, t) order: bitwise
    EXPECT_EQ(dwpe, dwpe_ref);
  }
  // Finite differences (the map is linear, so they are exact up to rounding).
  Floats wte_x = wte, wpe_x = wpe;
  Floats dwte(V * C, 0.0f), dwpe(Tmax * C, 0.0f);
  embedding_backward(Backend::Reference, dwte, dwpe, dout, tokens, B, T, C, V);
  auto objective = [&] {
    Floats out(B * T * C);
    embedding_forward(Backend::Reference, out, tokens, wte_x, wpe_x, B, T, C, V);
    return weighted(out, dout);
  };
  check_gradient(wte_x, dwte, objective, "dwte");
  check_gradient(wpe_x, dwpe, objective, "dwpe");
  for (std::int64_t i = T * C; i < Tmax * C; ++i) ASSERT_EQ(dwpe[i], 0.0f);  // rows beyond T
}

TEST(Embedding, RejectsTokensOutsideTheVocabularyNamingThem) {
  const std::int64_t B = 2, T = 3, C = 4, V = 5;
  std::vector<std::int32_t> tokens = {0, 1, 2, 3, 4, 5};
  const Floats wte(V * C), wpe(T * C);
  Floats out(B * T * C);
  for (Backend backend : {Backend::Reference, Backend::Cpu}) {
    EXPECT_THAT([&] { embedding_forward(backend, out, tokens, wte, wpe, B, T, C, V); },
                ThrowsMessage<Error>(HasSubstr("token 5 at position 5 (sequence 1, offset 2) is "
                                               "outside the vocabulary [0, 5)")));
  }
  tokens[5] = -1;
  EXPECT_THAT([&] { embedding_forward(Backend::Cpu, out, tokens, wte, wpe, B, T, C, V); },
              ThrowsMessage<Error>(HasSubstr("token -1")));
  tokens[5] = 0;
  const Floats short_wpe((T - 1) * C);
  EXPECT_THAT([&] { embedding_forward(Backend::Cpu, out, tokens, wte, short_wpe, B, T, C, V); },
              ThrowsMessage<Error>(HasSubstr("at least T = 3")));
}

// ---- layernorm ---------------------------------------------------------------------------------

TEST(LayerNorm, CpuMatchesReferenceAndIsThreadCountIndependent) {
  for (const auto [N, C] : {std::pair<std::int64_t, std::int64_t>{1, 1}, {7, 33}, {64, 768}, {5, 1000}}) {
    auto inp = random(N * C, 10, 2.0f);
    for (float& x : inp) x += 3.0f;  // an offset the mean must remove
    const auto w = random(C, 11), b = random(C, 12), dout = random(N * C, 13);
    Floats out_ref(N * C), mean_ref(N), rstd_ref(N);
    layernorm_forward(Backend::Reference, out_ref, mean_ref, rstd_ref, inp, w, b, N, C);
    Floats dinp_ref(N * C, 0.1f), dw_ref(C, 0.2f), db_ref(C, 0.3f);
    layernorm_backward(Backend::Reference, dinp_ref, dw_ref, db_ref, dout, inp, w, mean_ref, rstd_ref, N, C);
    for (int threads : {1, 2, 3}) {
      Threads t(threads);
      Floats out(N * C), mean(N), rstd(N);
      layernorm_forward(Backend::Cpu, out, mean, rstd, inp, w, b, N, C);
      expect_close(out, out_ref, 1e-5, "layernorm out");
      expect_close(mean, mean_ref, 1e-5, "layernorm mean");
      expect_close(rstd, rstd_ref, 1e-5, "layernorm rstd");
      Floats dinp(N * C, 0.1f), dw(C, 0.2f), db(C, 0.3f);
      layernorm_backward(Backend::Cpu, dinp, dw, db, dout, inp, w, mean_ref, rstd_ref, N, C);
      expect_close(dinp, dinp_ref, 1e-5, "layernorm dinp");
      EXPECT_EQ(dw, dw_ref);  // rows in order in both: bitwise
      EXPECT_EQ(db, db_ref);
    }
  }
}

TEST(LayerNorm, BackwardMatchesFiniteDifferences) {
  const std::int64_t N = 5, C = 24;
  Floats inp = random(N * C, 20), w = random(C, 21), b = random(C, 22);
  for (float& x : w) x += 1.0f;
  const auto probe = random(N * C, 23);
  Floats out(N * C), mean(N), rstd(N);
  layernorm_forward(Backend::Reference, out, mean, rstd, inp, w, b, N, C);
  Floats dinp(N * C, 0.0f), dw(C, 0.0f), db(C, 0.0f);
  layernorm_backward(Backend::Reference, dinp, dw, db, probe, inp, w, mean, rstd, N, C);
  auto objective = [&] {
    layernorm_forward(Backend::Reference, out, mean, rstd, inp, w, b, N, C);
    return weighted(out, probe);
  };
  check_gradient(inp, dinp, objective, "layernorm dinp");
  check_gradient(w, dw, objective, "layernorm dweight");
  check_gradient(b, db, objective, "layernorm dbias");
}

// ---- linear ------------------------------------------------------------------------------------

TEST(Linear, CpuMatchesReferenceWithAndWithoutBias) {
  const std::int64_t shapes[][3] = {{1, 1, 1}, {7, 13, 17}, {64, 96, 288}, {33, 200, 5}, {0, 4, 3}, {3, 0, 4}};
  for (const auto& s : shapes) {
    const std::int64_t N = s[0], IC = s[1], OC = s[2];
    const auto inp = random(N * IC, 30), w = random(OC * IC, 31), bias = random(OC, 32), dout = random(N * OC, 33);
    for (bool with_bias : {true, false}) {
      const std::span<const float> b = with_bias ? std::span<const float>(bias) : std::span<const float>();
      Floats out_ref(N * OC), dinp_ref(N * IC), dw_ref(OC * IC, 0.5f), db_ref(OC, 0.25f);
      linear_forward(Backend::Reference, out_ref, inp, w, b, N, IC, OC);
      linear_backward(Backend::Reference, dinp_ref, dw_ref, with_bias ? std::span<float>(db_ref) : std::span<float>(),
                      dout, inp, w, N, IC, OC);
      for (int threads : {1, 2}) {
        Threads t(threads);
        Floats out(N * OC, NAN), dinp(N * IC, NAN), dw(OC * IC, 0.5f), db(OC, 0.25f);
        linear_forward(Backend::Cpu, out, inp, w, b, N, IC, OC);
        linear_backward(Backend::Cpu, dinp, dw, with_bias ? std::span<float>(db) : std::span<float>(), dout, inp,
                        w, N, IC, OC);
        const std::string where = std::to_string(N) + "×" + std::to_string(IC) + "→" + std::to_string(OC);
        expect_close(out, out_ref, 2e-5, "linear out " + where);
        expect_close(dinp, dinp_ref, 2e-5, "linear dinp " + where);
        expect_close(dw, dw_ref, 2e-5, "linear dweight " + where);
        EXPECT_EQ(db, db_ref) << where;  // rows in order in both
      }
    }
  }
}

// Bf16 products (precision.hpp): the Reference's equal products of the bf16-rounded operands summed
// in double (within fp32 summation rounding, far below bf16's 2^-8), differ from fp32's, and Cpu
// matches the Reference at every thread count; the bias gradient is fp32's exactly.
TEST(Linear, Bf16ProductsMultiplyRoundedOperandsWithFp32Sums) {
  const std::int64_t N = 33, IC = 200, OC = 17;
  const auto inp = random(N * IC, 50), w = random(OC * IC, 51), bias = random(OC, 52), dout = random(N * OC, 53);
  const auto rounded = [](const Floats& v) {
    Floats r(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) r[i] = kernels::bf16_to_float(kernels::float_to_bf16(v[i]));
    return r;
  };
  const Floats x = rounded(inp), wr = rounded(w), dy = rounded(dout);
  Floats expected_out(N * OC), expected_dinp(N * IC), expected_dw(OC * IC);
  for (std::int64_t n = 0; n < N; ++n) {
    for (std::int64_t o = 0; o < OC; ++o) {
      double sum = bias[o];
      for (std::int64_t i = 0; i < IC; ++i) sum += double{x[n * IC + i]} * wr[o * IC + i];
      expected_out[n * OC + o] = static_cast<float>(sum);
    }
    for (std::int64_t i = 0; i < IC; ++i) {
      double sum = 0;
      for (std::int64_t o = 0; o < OC; ++o) sum += double{dy[n * OC + o]} * wr[o * IC + i];
      expected_dinp[n * IC + i] = static_cast<float>(sum);
    }
  }
  for (std::int64_t o = 0; o < OC; ++o) {
    for (std::int64_t i = 0; i < IC; ++i) {
      double sum = 0;
      for (std::int64_t n = 0; n < N; ++n) sum += double{dy[n * OC + o]} * x[n * IC + i];
      expected_dw[o * IC + i] = static_cast<float>(sum);
    }
  }
  Floats fp32_out(N * OC);
  linear_forward(Backend::Reference, fp32_out, inp, w, bias, N, IC, OC);
  Floats fp32_db(OC, 0.0f), fp32_dw(OC * IC, 0.0f);
  linear_backward(Backend::Reference, {}, fp32_dw, fp32_db, dout, inp, w, N, IC, OC);
  for (const Backend backend : {Backend::Reference, Backend::Cpu}) {
    for (int threads : {1, 2}) {
      Threads t(threads);
      Floats out(N * OC), dinp(N * IC), dw(OC * IC, 0.0f), db(OC, 0.0f);
      linear_forward(backend, out, inp, w, bias, N, IC, OC, Precision::Bf16);
      linear_backward(backend, dinp, dw, db, dout, inp, w, N, IC, OC, Precision::Bf16);
      expect_close(out, expected_out, 2e-6, "bf16 linear out");
      expect_close(dinp, expected_dinp, 2e-6, "bf16 linear dinp");
      expect_close(dw, expected_dw, 2e-6, "bf16 linear dweight");
      EXPECT_EQ(db, fp32_db) << "the bias gradient sums the fp32 dout";
    }
  }
  double gap = 0;
  for (std::size_t i = 0; i < fp32_out.size(); ++i) gap = std::max(gap, double{std::fabs(fp32_out[i] - expected_out[i])});
  EXPECT_GT(gap, 1e-3) << "bf16 products should differ from fp32 ones by about 2^-8 of the operands";
}

// An input stored as bf16 bits (the product inputs a bf16 run keeps): bitwise the fp32-input
// kernels' bf16 result for its widened values, on both host backends, at every thread count.
TEST(Linear, Bf16StoredInputGivesTheBf16ProductsBitwise) {
  const std::int64_t N = 29, IC = 130, OC = 11;
  const auto inp = random(N * IC, 60), w = random(OC * IC, 61), bias = random(OC, 62), dout = random(N * OC, 63);
  std::vector<std::uint16_t> bits(inp.size());
  Floats widened(inp.size());
  for (std::size_t i = 0; i < inp.size(); ++i) {
    bits[i] = kernels::float_to_bf16(inp[i]);
    widened[i] = kernels::bf16_to_float(bits[i]);
  }
  const std::span<const std::uint16_t> stored(bits);
  for (const Backend backend : {Backend::Reference, Backend::Cpu}) {
    for (int threads : {1, 2}) {
      Threads t(threads);
      Floats out(N * OC), expected_out(N * OC), dinp(N * IC), expected_dinp(N * IC);
      Floats dw = random(OC * IC, 64), expected_dw = dw, db = random(OC, 65), expected_db = db;
      linear_forward(backend, expected_out, widened, w, bias, N, IC, OC, Precision::Bf16);
      linear_forward(backend, out, stored, w, bias, N, IC, OC);
      EXPECT_EQ(out, expected_out) << to_string(backend) << " on " << threads;
      // The fp32 input's own bf16 rounding gives the same bits: rounding twice changes nothing.
      Floats from_fp32(N * OC);
      linear_forward(backend, from_fp32, inp, w, bias, N, IC, OC, Precision::Bf16);
      EXPECT_EQ(out, from_fp32) << to_string(backend) << " on " << threads;
      linear_backward(backend, expected_dinp, expected_dw, expected_db, dout, widened, w, N, IC, OC, Precision::Bf16);
      linear_backward(backend, dinp, dw, db, dout, stored, w, N, IC, OC);
      EXPECT_EQ(dinp, expected_dinp) << to_string(backend) << " on " << threads;
      EXPECT_EQ(dw, expected_dw) << to_string(backend) << " on " << threads;
      EXPECT_EQ(db, expected_db) << to_string(backend) << " on " << threads;
    }
  }
  // A stored input of the wrong size is refused by name.
  Floats out(N * OC);
  EXPECT_THROW(linear_forward(Backend::Cpu, out, stored.first(5), w, bias, N, IC, OC), Error);
}

TEST(Linear, BackwardMatchesFiniteDifferences) {
  const std::int64_t N = 6, IC = 10, OC = 7;
  Floats inp = random(N * IC, 40), w = random(OC * IC, 41), bias = random(OC, 42);
  const auto probe = random(N * OC, 43);
  Floats dinp(N * IC), dw(OC * IC, 0.0f), db(OC, 0.0f);
  linear_backward(Backend::Reference, dinp, dw, db, probe, inp, w, N, IC, OC);
  auto objective = [&] {
    Floats out(N * OC);
    linear_forward(Backend::Reference, out, inp, w, bias, N, IC, OC);
    return weighted(out, probe);
  };
  check_gradient(inp, dinp, objective, "linear dinp");
  check_gradient(w, dw, objective, "linear dweight");
  check_gradient(bias, db, objective, "linear dbias");
}

TEST(Linear, RejectsMismatchedBuffers) {
  Floats inp(6), w(12), out(8), bias(3);
  EXPECT_THAT([&] { linear_forward(Backend::Cpu, out, inp, w, {}, 2, 3, 4); }, ::testing::Not(::testing::Throws<Error>()));
  EXPECT_THAT([&] { linear_forward(Backend::Cpu, out, inp, w, bias, 2, 3, 4); },
              ThrowsMessage<Error>(HasSubstr("linear_forward: bias (OC, or empty) holds 3 floats, expected 4")));
  EXPECT_THAT([&] { linear_forward(Backend::Reference, out, inp, w, {}, 2, 4, 3); },
              ThrowsMessage<Error>(HasSubstr("out (N × OC) holds 8 floats, expected 6")));
  EXPECT_THAT([&] { linear_forward(Backend::Kokkos, out, inp, w, {}, 2, 3, 4); },
              ThrowsMessage<Error>(HasSubstr("linear_forward has no kokkos implementation")));
  EXPECT_NE(std::string(cpu_matrix_products()), "");
}

// ---- attention ---------------------------------------------------------------------------------

TEST(Attention, CpuMatchesReferenceAndRowsAreCausalSoftmaxes) {
  for (const auto& s : {std::array<std::int64_t, 4>{1, 1, 4, 1}, {2, 7, 12, 3}, {3, 64, 64, 4}}) {
    const std::int64_t B = s[0], T = s[1], C = s[2], H = s[3];
    const auto qkv = random(B * T * 3 * C, 50, 2.0f), dout = random(B * T * C, 51);
    Floats out_ref(B * T * C), att_ref(B * H * T * T), dqkv_ref(B * T * 3 * C), datt(B * H * T * T);
    attention_forward(Backend::Reference, out_ref, att_ref, qkv, B, T, C, H);
    attention_backward(Backend::Reference, dqkv_ref, datt, dout, qkv, att_ref, B, T, C, H);
    for (std::int64_t row = 0; row < B * H * T; ++row) {
      const std::int64_t t = row % T;
      double sum = 0;
      for (std::int64_t t2 = 0; t2 < T; ++t2) {
        const float a = att_ref[row * T + t2];
        if (t2 > t) ASSERT_EQ(a, 0.0f);
        sum += a;
      }
      ASSERT_NEAR(sum, 1.0, 1e-5);
    }
    for (int threads : {1, 2, 3}) {
      Threads th(threads);
      Floats out(B * T * C), att(B * H * T * T), dqkv(B * T * 3 * C, NAN);
      attention_forward(Backend::Cpu, out, att, qkv, B, T, C, H);
      expect_close(out, out_ref, 1e-5, "attention out");
      expect_close(att, att_ref, 1e-5, "attention att");
      attention_backward(Backend::Cpu, dqkv, datt, dout, qkv, att_ref, B, T, C, H);
      expect_close(dqkv, dqkv_ref, 1e-5, "attention dqkv");
    }
  }
}

TEST(Attention, BackwardMatchesFiniteDifferences) {
  const std::int64_t B = 2, T = 5, C = 8, H = 2;
  Floats qkv = random(B * T * 3 * C, 60);
  const auto probe = random(B * T * C, 61);
  Floats out(B * T * C), att(B * H * T * T), dqkv(B * T * 3 * C), datt(B * H * T * T);
  attention_forward(Backend::Reference, out, att, qkv, B, T, C, H);
  attention_backward(Backend::Reference, dqkv, datt, probe, qkv, att, B, T, C, H);
  auto objective = [&] {
    attention_forward(Backend::Reference, out, att, qkv, B, T, C, H);
    return weighted(out, probe);
  };
  check_gradient(qkv, dqkv, objective, "attention dqkv", 80);
}

TEST(TransformerKernels, Bf16StorageFormsOfGeluAndAttention) {
  for (const Backend backend : {Backend::Reference, Backend::Cpu}) {
    for (int threads : {1, 2}) {
      Threads t(threads);
      test::expect_bf16_storage_forms(backend, 1e-5, std::string(to_string(backend)) + " on " + std::to_string(threads));
    }
  }
}

TEST(Attention, RejectsWidthNotDivisibleByHeads) {
  Floats qkv(2 * 3 * 10), out(2 * 10), att(3 * 2 * 2);
  EXPECT_THAT([&] { attention_forward(Backend::Cpu, out, att, qkv, 1, 2, 10, 3); },
              ThrowsMessage<Error>(HasSubstr("width C = 10 must be a positive multiple of the heads H = 3")));
}

// ---- GELU --------------------------------------------------------------------------------------

TEST(Gelu, CpuMatchesReferenceAndKnownValues) {
  auto inp = random(4099, 70, 3.0f);
  inp[0] = 0.0f;
  inp[1] = 1.0f;
  inp[2] = -30.0f;
  inp[3] = 30.0f;
  const auto dout = random(4099, 71);
  Floats ref(inp.size()), cpu(inp.size()), dref(inp.size()), dcpu(inp.size());
  gelu_forward(Backend::Reference, ref, inp);
  gelu_backward(Backend::Reference, dref, inp, dout);
  EXPECT_EQ(ref[0], 0.0f);
  EXPECT_NEAR(ref[1], 0.841192f, 1e-6);  // torch: F.gelu(1.0, approximate="tanh")
  EXPECT_EQ(ref[2], -0.0f);
  EXPECT_EQ(ref[3], 30.0f);
  for (int threads : {1, 3}) {
    Threads t(threads);
    gelu_forward(Backend::Cpu, cpu, inp);
    gelu_backward(Backend::Cpu, dcpu, inp, dout);
    expect_close(cpu, ref, 1e-6, "gelu");
    // Reference's 1 + tanh u and 1 − tanh² u cancel for x ≈ −3…−5 (absolute error of a few
    // float ulps of 1, times x·(1 + 0.134·x²)); Cpu's logistic form does not: hence 4e-6 here.
    expect_close(dcpu, dref, 4e-6, "gelu backward");
  }
  Floats in_place = dout;  // dinp may be dout
  gelu_backward(Backend::Cpu, in_place, inp, in_place);
  EXPECT_EQ(in_place, dcpu);
}

TEST(Gelu, BackwardMatchesFiniteDifferences) {
  Floats inp = random(200, 72, 2.0f);
  const auto probe = random(200, 73);
  Floats dinp(200);
  gelu_backward(Backend::Reference, dinp, inp, probe);
  auto objective = [&] {
    Floats out(inp.size());
    gelu_forward(Backend::Reference, out, inp);
    return weighted(out, probe);
  };
  check_gradient(inp, dinp, objective, "gelu dinp", 60);
}

// ---- cross-entropy -----------------------------------------------------------------------------

TEST(CrossEntropy, CpuMatchesReferenceFusedMatchesForwardAndInPlaceWorks) {
  const std::int64_t N = 37, V = 1001;
  auto logits = random(N * V, 80, 4.0f);
  logits[5] = 80.0f;  // large logits: the max subtraction keeps exp finite
  const auto targets = random_ids(N, V, 81);
  Floats losses_ref(N), losses(N), fused_losses(N), dlogits_ref(N * V), dlogits(N * V);
  cross_entropy_forward(Backend::Reference, losses_ref, logits, targets, N, V);
  cross_entropy_forward_backward(Backend::Reference, fused_losses, dlogits_ref, logits, targets, N, V, 1.0f / N);
  EXPECT_EQ(fused_losses, losses_ref);
  for (float loss : losses_ref) ASSERT_TRUE(std::isfinite(loss));
  for (int threads : {1, 2, 3}) {
    Threads t(threads);
    cross_entropy_forward(Backend::Cpu, losses, logits, targets, N, V);
    expect_close(losses, losses_ref, 1e-5, "losses");
    cross_entropy_forward_backward(Backend::Cpu, fused_losses, dlogits, logits, targets, N, V, 1.0f / N);
    expect_close(fused_losses, losses_ref, 1e-5, "fused losses");
    expect_close(dlogits, dlogits_ref, 1e-5, "dlogits");
  }
  Floats in_place = logits;
  cross_entropy_forward_backward(Backend::Cpu, fused_losses, in_place, in_place, targets, N, V, 1.0f / N);
  EXPECT_EQ(in_place, dlogits);
}

TEST(CrossEntropy, BackwardMatchesFiniteDifferences) {
  const std::int64_t N = 4, V = 9;
  Floats logits = random(N * V, 82, 2.0f);
  const auto targets = random_ids(N, V, 83);
  Floats losses(N), dlogits(N * V);
  cross_entropy_forward_backward(Backend::Reference, losses, dlogits, logits, targets, N, V, 1.0f / N);
  auto objective = [&] {
    Floats l(N);
    cross_entropy_forward(Backend::Reference, l, logits, targets, N, V);
    double sum = 0;
    for (float x : l) sum += x;
    return sum / N;
  };
  check_gradient(logits, dlogits, objective, "dlogits", 36);
}

TEST(CrossEntropy, RejectsTargetsOutsideTheVocabulary) {
  const Floats logits(2 * 3);
  Floats losses(2);
  const std::vector<std::int32_t> targets = {1, 3};
  EXPECT_THAT([&] { cross_entropy_forward(Backend::Cpu, losses, logits, targets, 2, 3); },
              ThrowsMessage<Error>(HasSubstr("target 3 at row 1 is outside the vocabulary [0, 3)")));
}

// ---- determinism -------------------------------------------------------------------------------

TEST(TransformerKernels, CpuRunsAreBitwiseRepeatable) { test::expect_runs_bitwise_repeatable(Backend::Cpu); }

}  // namespace
}  // namespace lowcomm::kernels
