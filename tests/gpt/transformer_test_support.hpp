#pragma once
// Random inputs, the closeness check and the repeatability check the transformer kernels' tests
// share (Cpu against Reference in transformer_kernels_test.cpp, CUDA against Reference in
// cuda_model_kernels_test.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "lowcomm/kernels/attention.hpp"
#include "lowcomm/kernels/backend.hpp"
#include "lowcomm/kernels/float16.hpp"
#include "lowcomm/kernels/gelu.hpp"
#include "lowcomm/kernels/linear.hpp"

namespace lowcomm::kernels::test {

using Floats = std::vector<float>;

inline Floats random(std::int64_t n, unsigned seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, scale);
  Floats v(static_cast<std::size_t>(n));
  for (float& x : v) x = normal(rng);
  return v;
}

inline std::vector<std::int32_t> random_ids(std::int64_t n, std::int64_t V, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<std::int32_t> pick(0, static_cast<std::int32_t>(V - 1));
  std::vector<std::int32_t> v(static_cast<std::size_t>(n));
  for (auto& x : v) x = pick(rng);
  return v;
}

// Entrywise |actual − ref| ≤ rtol · (|ref| + scale), scale the RMS of ref (for sums that cancel).
inline void expect_close(const Floats& actual, const Floats& ref, double rtol, const std::string& what) {
  ASSERT_EQ(actual.size(), ref.size()) << what;
  double rms = 0;
  for (float x : ref) rms += double{x} * x;
  rms = std::sqrt(rms / std::max<std::size_t>(ref.size(), 1)) + 1e-30;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    ASSERT_NEAR(actual[i], ref[i], rtol * (std::fabs(ref[i]) + rms)) << what << " at " << i;
  }
}

// Attention forward and backward and a linear layer's backward pass, run twice on `backend`, give
// the same bits.
inline void expect_runs_bitwise_repeatable(Backend backend) {
  const std::int64_t B = 2, T = 16, C = 48, H = 4, N = B * T;
  const auto qkv = random(N * 3 * C, 90), dout = random(N * C, 91), w = random(3 * C * C, 92);
  Floats first_out, first_dqkv, first_dw;
  for (int run = 0; run < 2; ++run) {
    Floats out(N * C), att(B * H * T * T), dqkv(N * 3 * C), datt(B * H * T * T), dw(3 * C * C, 0.0f), dinp(N * C);
    attention_forward(backend, out, att, qkv, B, T, C, H);
    attention_backward(backend, dqkv, datt, dout, qkv, att, B, T, C, H);
    linear_backward(backend, dinp, dw, {}, dqkv, out, w, N, C, 3 * C);
    if (run == 0) {
      first_out = out, first_dqkv = dqkv, first_dw = dw;
    } else {
      EXPECT_EQ(out, first_out);
      EXPECT_EQ(dqkv, first_dqkv);
      EXPECT_EQ(dw, first_dw);
    }
  }
}

// Values rounded to bf16: their bits, and those widened back to fp32.
struct Bf16Values {
  std::vector<std::uint16_t> bits;
  Floats widened;
  explicit Bf16Values(const Floats& values) : bits(values.size()), widened(values.size()) {
    for (std::size_t i = 0; i < values.size(); ++i) {
      bits[i] = float_to_bf16(values[i]);
      widened[i] = bf16_to_float(bits[i]);
    }
  }
};

// The bf16-storage forms of GELU and attention (gelu.hpp, attention.hpp). GELU on `backend`:
// bitwise its fp32 form on the widened values. Attention on the Reference: the stored
// probabilities are the fp32 kernel's rounded, the output is the sum weighted with them (against
// a double-precision sum), the backward pass is bitwise the fp32 kernel's on the widened values.
// Attention on `backend` against the Reference's bf16 forms: the probabilities within one bf16
// step (fp32 sums in another order can round the other way), the output and the backward pass
// (given the same stored probabilities) within rtol, as the fp32 forms.
inline void expect_bf16_storage_forms(Backend backend, double rtol, const std::string& where) {
  const Floats fc = random(4099, 80, 3.0f), dgelu = random(4099, 81);
  const Bf16Values stored_fc(fc);
  Floats from_bits(fc.size()), from_widened(fc.size());
  gelu_forward(backend, from_bits, std::span<const std::uint16_t>(stored_fc.bits));
  gelu_forward(backend, from_widened, stored_fc.widened);
  EXPECT_EQ(from_bits, from_widened) << "gelu_forward " << where;
  gelu_backward(backend, from_bits, std::span<const std::uint16_t>(stored_fc.bits), dgelu);
  gelu_backward(backend, from_widened, stored_fc.widened, dgelu);
  EXPECT_EQ(from_bits, from_widened) << "gelu_backward " << where;

  constexpr Backend kRef = Backend::Reference;
  const std::int64_t B = 2, T = 13, C = 24, H = 3, N = B * T, hs = C / H;
  const Bf16Values qkv(random(N * 3 * C, 82, 2.0f));
  const std::span<const std::uint16_t> qkv_bits(qkv.bits);
  const Floats dout = random(N * C, 83);
  const auto att_size = static_cast<std::size_t>(B * H * T * T);
  Floats out(N * C), att32(att_size), out32(N * C);
  std::vector<std::uint16_t> att(att_size);
  attention_forward(kRef, out, std::span<std::uint16_t>(att), qkv_bits, B, T, C, H);
  attention_forward(kRef, out32, att32, qkv.widened, B, T, C, H);
  for (std::size_t i = 0; i < att_size; ++i) ASSERT_EQ(att[i], float_to_bf16(att32[i])) << "att at " << i;
  // out = Σ_{t2≤t} att[t2] · v_t2 with the stored probabilities.
  Floats expected(N * C);
  for (std::int64_t b = 0; b < B; ++b) {
    for (std::int64_t h = 0; h < H; ++h) {
      for (std::int64_t t = 0; t < T; ++t) {
        for (std::int64_t i = 0; i < hs; ++i) {
          double sum = 0;
          for (std::int64_t t2 = 0; t2 <= t; ++t2) {
            sum += double{bf16_to_float(att[static_cast<std::size_t>(((b * H + h) * T + t) * T + t2)])} *
                   qkv.widened[static_cast<std::size_t>((b * T + t2) * 3 * C + 2 * C + h * hs + i)];
          }
          expected[static_cast<std::size_t>((b * T + t) * C + h * hs + i)] = static_cast<float>(sum);
        }
      }
    }
  }
  expect_close(out, expected, 1e-5, "attention out (bf16 storage)");
  Floats att_widened(att_size);
  for (std::size_t i = 0; i < att_size; ++i) att_widened[i] = bf16_to_float(att[i]);
  const std::span<const std::uint16_t> att_bits(att);
  Floats dqkv(N * 3 * C), dqkv32(N * 3 * C), datt(att_size);
  attention_backward(kRef, dqkv, datt, dout, qkv_bits, att_bits, B, T, C, H);
  attention_backward(kRef, dqkv32, datt, dout, qkv.widened, att_widened, B, T, C, H);
  EXPECT_EQ(dqkv, dqkv32) << "attention_backward (bf16 storage)";
  if (backend == kRef) return;

  Floats backend_out(N * C), backend_dqkv(N * 3 * C);
  std::vector<std::uint16_t> backend_att(att_size);
  attention_forward(backend, backend_out, std::span<std::uint16_t>(backend_att), qkv_bits, B, T, C, H);
  for (std::size_t i = 0; i < att_size; ++i) {
    const float a = bf16_to_float(backend_att[i]), ref = att_widened[i];
    ASSERT_LE(std::fabs(a - ref), std::ldexp(std::fabs(ref), -7)) << "att " << where << " at " << i;
  }
  expect_close(backend_out, out, rtol, "attention out (bf16 storage) " + where);
  attention_backward(backend, backend_dqkv, datt, dout, qkv_bits, att_bits, B, T, C, H);
  expect_close(backend_dqkv, dqkv, rtol, "attention dqkv (bf16 storage) " + where);
}

}  // namespace lowcomm::kernels::test
