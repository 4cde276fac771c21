#pragma once
// Random inputs, the closeness check and the repeatability check the transformer kernels' tests
// share (Cpu against Reference in transformer_kernels_test.cpp, CUDA against Reference in
// cuda_model_kernels_test.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "lowcomm/kernels/attention.hpp"
#include "lowcomm/kernels/backend.hpp"
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

}  // namespace lowcomm::kernels::test
