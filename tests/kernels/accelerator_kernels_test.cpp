// Every kernel of an accelerator backend (kernels/kokkos or kernels/cuda, chosen at compile time by
// LOWCOMM_TEST_ACCELERATOR = Kokkos | Cuda) against the Reference kernel on random inputs of
// awkward sizes (1, primes, sizes that are no multiple of 8): bit for bit where the result is
// defined exactly (selections, scatters, packings, quantisation, the optimizers' updates), within
// float rounding for the sums (DCT, GEMM, Gram-Schmidt). Malformed inputs give the Reference's
// error message. Built as
// kernels_kokkos_test (preset kokkos) and kernels_cuda_test (preset cuda); the CUDA one skips every
// test, saying why, where no device is usable.
#include <gtest/gtest.h>
#ifdef LOWCOMM_TEST_CUDA_DEVICE_MEMORY
#include <cuda_runtime.h>
#endif

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "kernel_test_support.hpp"
#include "lowcomm/kernels/dct.hpp"
#include "lowcomm/kernels/dct_topk.hpp"
#include "lowcomm/kernels/elementwise.hpp"
#include "lowcomm/kernels/float16.hpp"
#include "lowcomm/kernels/linalg.hpp"
#include "lowcomm/kernels/optimizer_updates.hpp"
#include "lowcomm/kernels/pack.hpp"
#include "lowcomm/kernels/quantize.hpp"
#include "lowcomm/kernels/scatter.hpp"
#include "lowcomm/kernels/topk.hpp"

namespace lowcomm::kernels::test {
namespace {

constexpr Backend kRef = Backend::Reference;
constexpr Backend kAccelerator = Backend::LOWCOMM_TEST_ACCELERATOR;

// Skips each test where the backend cannot run (a CUDA build on a machine without a GPU).
class AcceleratorKernels : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const std::string reason = unavailable_reason(kAccelerator); !reason.empty()) GTEST_SKIP() << reason;
  }
};

// The message of the lowcomm::Error that `call` throws ("" when it throws none).
template <class F>
std::string error_of(F&& call) {
  try {
    call();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// Values with repeated magnitudes (ties), both zeros, and a NaN and infinities when asked.
std::vector<float> awkward_values(std::size_t n, std::uint64_t seed, bool specials) {
  std::vector<float> v = uniform_values(n, seed);
  for (std::size_t i = 0; i < n; i += 7) v[i] = (i % 2 ? -1.0f : 1.0f) * std::round(v[i] * 4.0f) / 4.0f;
  if (n > 3) v[3] = -0.0f;
  if (specials && n > 10) {
    v[5] = std::numeric_limits<float>::quiet_NaN();
    v[9] = -std::numeric_limits<float>::infinity();
  }
  return v;
}

void expect_close(const std::vector<float>& actual, const std::vector<float>& expected, double relative) {
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t i = 0; i < actual.size(); ++i) {
    ASSERT_NEAR(actual[i], expected[i], relative * (1.0 + std::abs(expected[i]))) << "element " << i;
  }
}

TEST_F(AcceleratorKernels, TopkPerBlockIsTheReferencesSelection) {
  for (const auto [blocks, block_size] : {std::pair{1, 1}, {3, 7}, {5, 64}, {2, 4096}, {11, 29}}) {
    for (const std::int64_t k : {1, 2, 5, 32, 5000}) {
      for (const bool specials : {false, true}) {
        const std::vector<float> v = awkward_values(static_cast<std::size_t>(blocks * block_size), 17 + k, specials);
        const std::int64_t kept = std::clamp<std::int64_t>(k, 1, block_size);
        std::vector<std::int64_t> ri(blocks * kept), ki(blocks * kept);
        std::vector<float> rv(blocks * kept), kv(blocks * kept);
        topk_per_block(kRef, v, block_size, k, ri, rv);
        topk_per_block(kAccelerator, v, block_size, k, ki, kv);
        ASSERT_EQ(ki, ri) << blocks << "x" << block_size << " k " << k;
        expect_bitwise_equal(kv, rv);
      }
    }
  }
}

TEST_F(AcceleratorKernels, TopkGlobalIsTheReferencesSelection) {
  for (const std::size_t n : {1u, 2u, 13u, 1000u, 65537u}) {
    for (const std::int64_t k : {1, 3, 100, 70000}) {
      for (const bool specials : {false, true}) {
        std::vector<float> v = awkward_values(n, n + k, specials);
        if (n == 1000) std::fill(v.begin() + 100, v.begin() + 400, 0.25f);  // a long run of ties at the cut
        const std::size_t kept = static_cast<std::size_t>(std::clamp<std::int64_t>(k, 1, n));
        std::vector<std::int64_t> ri(kept), ki(kept);
        std::vector<float> rv(kept), kv(kept);
        topk_global(kRef, v, k, ri, rv);
        topk_global(kAccelerator, v, k, ki, kv);
        ASSERT_EQ(ki, ri) << "n " << n << " k " << k;
        expect_bitwise_equal(kv, rv);
      }
    }
  }
}

TEST_F(AcceleratorKernels, DctEncodeAndDecodeAreTheReferencesWithinRounding) {
  for (const std::vector<std::int64_t>& shape :
       std::vector<std::vector<std::int64_t>>{{1}, {37}, {64, 64}, {96, 130}, {3, 29, 58}, {7, 13}}) {
    const BlockLayout layout = block_layout(shape, 64);
    const std::vector<float> x = uniform_values(static_cast<std::size_t>(layout.size()), 3);
    std::vector<float> rq(x.size()), kq(x.size()), rx(x.size()), kx(x.size());
    dct_encode_blocks(kRef, layout, x, rq);
    dct_encode_blocks(kAccelerator, layout, x, kq);
    expect_close(kq, rq, 1e-5);
    dct_decode_blocks(kRef, layout, rq, rx);
    dct_decode_blocks(kAccelerator, layout, rq, kx);
    expect_close(kx, rx, 1e-5);
  }
}

TEST_F(AcceleratorKernels, FusedDctTopkAndScatterMeanDecodeFollowTheReference) {
  const std::vector<std::int64_t> shape{96, 130};
  const BlockLayout layout = block_layout(shape, 64);
  const std::int64_t k = 8, entries = layout.blocks() * k;
  const std::vector<float> x = uniform_values(static_cast<std::size_t>(layout.size()), 9);
  std::vector<std::int64_t> ri(entries), ki(entries);
  std::vector<float> rv(entries), kv(entries);
  dct_topk_per_block(kRef, layout, x, k, ri, rv);
  dct_topk_per_block(kAccelerator, layout, x, k, ki, kv);
  ASSERT_EQ(ki, ri);
  expect_close(kv, rv, 1e-5);
  const std::vector<BlockPairs> sources{{ri, rv}, {ri, rv}};
  std::vector<float> rout(x.size()), kout(x.size());
  scatter_mean_dct_decode(kRef, layout, k, sources, rout);
  scatter_mean_dct_decode(kAccelerator, layout, k, sources, kout);
  expect_close(kout, rout, 1e-5);
}

TEST_F(AcceleratorKernels, ScattersSumInTheReferencesOrder) {
  for (const std::size_t slots : {1u, 17u, 1000u}) {
    const std::size_t pairs = 3 * slots + 5;
    std::vector<std::int64_t> indices(pairs);
    for (std::size_t p = 0; p < pairs; ++p) indices[p] = static_cast<std::int64_t>((p * 7919) % slots);
    const std::vector<float> values = uniform_values(pairs, slots);
    std::vector<float> r = uniform_values(slots, 1), kk = r;
    scatter_add(kRef, indices, values, r);
    scatter_add(kAccelerator, indices, values, kk);
    expect_bitwise_equal(kk, r);
  }
  for (const auto [blocks, block_size, k] : {std::tuple{1, 1, 1}, {4, 29, 3}, {9, 64, 64}}) {
    std::vector<std::vector<std::int64_t>> indices(3);
    std::vector<std::vector<float>> values(3);
    std::vector<BlockPairs> sources;
    for (int l = 0; l < 3; ++l) {
      for (std::int64_t p = 0; p < blocks * k; ++p) indices[l].push_back((p * (l + 3)) % block_size);
      values[l] = uniform_values(static_cast<std::size_t>(blocks * k), 40 + l);
      sources.push_back({indices[l], values[l]});
    }
    std::vector<float> r(blocks * block_size, 7.0f), kk(blocks * block_size, -7.0f);
    scatter_mean_per_block(kRef, block_size, k, sources, r);
    scatter_mean_per_block(kAccelerator, block_size, k, sources, kk);
    expect_bitwise_equal(kk, r);
  }
}

TEST_F(AcceleratorKernels, GatherAndScatterDividedAreTheReferences) {
  for (const std::size_t slots : {1u, 17u, 1000u}) {
    const std::size_t pairs = 2 * slots + 3;
    std::vector<std::int64_t> indices(pairs);
    for (std::size_t p = 0; p < pairs; ++p) indices[p] = static_cast<std::int64_t>((p * 7919) % slots);
    const std::vector<float> source = awkward_values(slots, slots, false);
    std::vector<float> r(pairs), kk(pairs);
    gather(kRef, indices, source, r);
    gather(kAccelerator, indices, source, kk);
    expect_bitwise_equal(kk, r);
    for (const float divisor : {1.0f, 3.0f}) {
      std::vector<float> ro(slots, 9.0f), ko(slots, -9.0f);
      scatter_divided(kRef, indices, r, divisor, ro);
      scatter_divided(kAccelerator, indices, r, divisor, ko);
      expect_bitwise_equal(ko, ro);
    }
  }
}

TEST_F(AcceleratorKernels, HalfPrecisionConversionsAreTheReferences) {
  std::vector<float> v = awkward_values(1001, 5, true);
  v[20] = 1e-6f;    // fp16 subnormal
  v[21] = 70000.0f;  // beyond fp16: inf
  for (const ValueType type : {ValueType::F16, ValueType::BF16, ValueType::F32}) {
    std::vector<std::byte> r(v.size() * value_bytes(type)), kk(r.size());
    encode_values(kRef, v, type, r);
    encode_values(kAccelerator, v, type, kk);
    ASSERT_EQ(kk, r);
    std::vector<float> ro(v.size()), ko(v.size());
    decode_values(kRef, r, type, ro);
    decode_values(kAccelerator, r, type, ko);
    expect_bitwise_equal(ko, ro);
  }
}

TEST_F(AcceleratorKernels, IndexAndSignPackingAreTheReferences) {
  for (const IndexWidth width : {IndexWidth::U8, IndexWidth::U16, IndexWidth::U32, IndexWidth::I64}) {
    for (const std::size_t n : {0u, 1u, 13u, 1001u}) {
      std::vector<std::int64_t> indices(n);
      for (std::size_t i = 0; i < n; ++i) indices[i] = static_cast<std::int64_t>((i * 2654435761u) % 251);
      std::vector<std::byte> r(packed_index_bytes(n, width)), kk(r.size());
      pack_indices(kRef, indices, width, r);
      pack_indices(kAccelerator, indices, width, kk);
      ASSERT_EQ(kk, r);
      std::vector<std::int64_t> back(n);
      unpack_indices(kAccelerator, kk, width, 251, back);
      ASSERT_EQ(back, indices);
    }
  }
  for (const std::size_t n : {1u, 8u, 13u, 1001u}) {
    const std::vector<float> v = awkward_values(n, n, false);
    std::vector<std::byte> r(packed_sign_bytes(n)), kk(r.size());
    pack_signs(kRef, v, r);
    pack_signs(kAccelerator, v, kk);
    ASSERT_EQ(kk, r);
    std::vector<float> ro(n), ko(n);
    unpack_signs(kRef, r, ro);
    unpack_signs(kAccelerator, r, ko);
    expect_bitwise_equal(ko, ro);
  }
}

// 12-bit indices and codes of every width: the Reference's bytes, and back; odd counts, codes that
// straddle bytes, and a bad index or code named as the Reference names it.
TEST_F(AcceleratorKernels, TwelveBitAndCodePackingAreTheReferences) {
  for (const std::size_t n : {0u, 1u, 13u, 1001u}) {
    std::vector<std::int64_t> indices(n);
    for (std::size_t i = 0; i < n; ++i) indices[i] = static_cast<std::int64_t>((i * 2654435761u) % 4096);
    std::vector<std::byte> r(packed_12bit_bytes(n)), kk(r.size());
    pack_12bit(kRef, indices, r);
    pack_12bit(kAccelerator, indices, kk);
    ASSERT_EQ(kk, r);
    std::vector<std::int64_t> back(n);
    unpack_12bit(kAccelerator, kk, 4096, back);
    ASSERT_EQ(back, indices);
    for (int bits = 1; bits <= 8; ++bits) {
      std::vector<std::uint8_t> codes(n);
      for (std::size_t i = 0; i < n; ++i) codes[i] = static_cast<std::uint8_t>((i * 40503u) % (1u << bits));
      std::vector<std::byte> rc(packed_code_bytes(n, bits)), kc(rc.size());
      pack_codes(kRef, codes, bits, rc);
      pack_codes(kAccelerator, codes, bits, kc);
      ASSERT_EQ(kc, rc) << bits;
      std::vector<std::uint8_t> codes_back(n);
      unpack_codes(kAccelerator, kc, bits, 1u << bits, codes_back);
      ASSERT_EQ(codes_back, codes) << bits;
    }
  }
  const std::vector<std::int64_t> unfit{1, 2, 4096, -1};
  std::vector<std::byte> packed(packed_12bit_bytes(4));
  EXPECT_EQ(error_of([&] { pack_12bit(kAccelerator, unfit, packed); }),
            error_of([&] { pack_12bit(kRef, unfit, packed); }));
  const std::vector<std::int64_t> fit{1, 2, 4000, 7};
  pack_12bit(kRef, fit, packed);
  std::vector<std::int64_t> out(4);
  EXPECT_EQ(error_of([&] { unpack_12bit(kAccelerator, packed, 100, out); }),
            error_of([&] { unpack_12bit(kRef, packed, 100, out); }));
  const std::vector<std::uint8_t> wide{1, 9, 2};
  std::vector<std::byte> codes(packed_code_bytes(3, 3));
  EXPECT_EQ(error_of([&] { pack_codes(kAccelerator, wide, 3, codes); }),
            error_of([&] { pack_codes(kRef, wide, 3, codes); }));
  const std::vector<std::byte> past{std::byte{0x3F}};  // 3, 3, 3 at 2 bits, with 3 bins
  std::vector<std::uint8_t> decoded(3);
  EXPECT_EQ(error_of([&] { unpack_codes(kAccelerator, past, 2, 3, decoded); }),
            error_of([&] { unpack_codes(kRef, past, 2, 3, decoded); }));
}

TEST_F(AcceleratorKernels, QuantisationIsTheReferencesBitForBit) {
  for (int bits = 1; bits <= 8; ++bits) {
    for (const std::size_t n : {1u, 13u, 1001u}) {
      for (const std::size_t group : {1u, 7u, 64u, 5000u}) {
        for (const Rounding rounding : {Rounding::Nearest, Rounding::Stochastic}) {
          if (bits == 1 && rounding == Rounding::Stochastic) continue;
          std::vector<float> x = awkward_values(n, bits * 100 + n, false);
          if (n > 20) std::fill(x.begin() + 8, x.begin() + 16, 0.0f);  // an all-zero group at group 8
          const std::size_t groups = (n + group - 1) / group;
          std::vector<std::byte> rc(quantized_bytes(n, bits)), kc(rc.size());
          std::vector<float> rs(groups), ks(groups);
          quantize(kRef, x, group, bits, rounding, 77, rc, rs);
          quantize(kAccelerator, x, group, bits, rounding, 77, kc, ks);
          ASSERT_EQ(kc, rc) << "bits " << bits << " n " << n << " group " << group;
          expect_bitwise_equal(ks, rs);
          std::vector<float> ro(n), ko(n);
          dequantize(kRef, rc, rs, group, bits, ro);
          dequantize(kAccelerator, rc, rs, group, bits, ko);
          expect_bitwise_equal(ko, ro);
          for (const bool first : {true, false}) {  // one step of the decoder's mean, either kind
            std::vector<float> rsum(n, 0.5f), ksum = rsum;
            dequantize_sum(kRef, rc, rs, group, bits, first, 3.0f, rsum);
            dequantize_sum(kAccelerator, rc, rs, group, bits, first, 3.0f, ksum);
            expect_bitwise_equal(ksum, rsum);
          }
        }
      }
    }
  }
}

TEST_F(AcceleratorKernels, GemmAndGramSchmidtAreTheReferencesWithinRounding) {
  for (const bool ta : {false, true}) {
    for (const bool tb : {false, true}) {
      for (const auto [m, n, k] : {std::tuple{1, 1, 1}, {13, 2, 29}, {64, 4, 3}, {7, 31, 0}}) {
        const std::vector<float> a = uniform_values(static_cast<std::size_t>(m * k), 1);
        const std::vector<float> b = uniform_values(static_cast<std::size_t>(k * n), 2);
        for (const float beta : {0.0f, 0.5f}) {
          std::vector<float> r = uniform_values(static_cast<std::size_t>(m * n), 3), kk = r;
          SCOPED_TRACE(testing::Message() << "ta " << ta << " tb " << tb << " m " << m << " n " << n << " k " << k
                                          << " beta " << beta);
          gemm(kRef, ta, tb, m, n, k, 1.5f, a, b, beta, r);
          gemm(kAccelerator, ta, tb, m, n, k, 1.5f, a, b, beta, kk);
          expect_close(kk, r, 1e-5 * std::sqrt(k + 1.0));
        }
      }
    }
  }
  // beta = 0 writes C without reading it, as BLAS does: NaNs there do not survive.
  const std::vector<float> a = uniform_values(6, 4), b = uniform_values(6, 5);
  std::vector<float> r(4, std::numeric_limits<float>::quiet_NaN()), kk = r;
  gemm(kRef, false, false, 2, 2, 3, 1.0f, a, b, 0.0f, r);
  gemm(kAccelerator, false, false, 2, 2, 3, 1.0f, a, b, 0.0f, kk);
  expect_close(kk, r, 1e-6);
  for (const auto [rows, cols] : {std::pair{1, 1}, {29, 4}, {768, 2}, {5, 5}}) {
    std::vector<float> r = uniform_values(static_cast<std::size_t>(rows * cols), rows), kk = r;
    for (int row = 0; row < rows; ++row) kk[row * cols] = r[row * cols] = 0.0f;  // a zero column stays zero
    orthonormalize_columns(kRef, r, rows, cols, 1e-8f);
    orthonormalize_columns(kAccelerator, kk, rows, cols, 1e-8f);
    expect_close(kk, r, 1e-5);
  }
}

TEST_F(AcceleratorKernels, ElementwiseMapsAreTheReferencesBitForBit) {
  for (const std::size_t n : {std::size_t{1}, std::size_t{17}, std::size_t{100003}}) {
    const std::vector<float> a = awkward_values(n, n, true), b = awkward_values(n, n + 1, false);
    std::vector<float> r(n), acc(n, 7.0f);
    sign(kRef, a, r);
    sign(kAccelerator, a, acc);
    expect_bitwise_equal(acc, r);
    fill(kAccelerator, acc, -0.0f);
    expect_bitwise_equal(acc, std::vector<float>(n, -0.0f));
    scale(kRef, 0.999f, a, r);
    scale(kAccelerator, 0.999f, a, acc);
    expect_bitwise_equal(acc, r);
    scale_add(kRef, 0.999f, a, b, r);
    acc = b;
    scale_add(kAccelerator, 0.999f, a, acc, acc);  // in place
    expect_bitwise_equal(acc, r);
    subtract(kRef, a, b, r);
    subtract(kAccelerator, a, b, acc);
    expect_bitwise_equal(acc, r);
    r = b;
    acc = b;
    subtract_scaled_sign(kRef, 0.01f, a, r);
    subtract_scaled_sign(kAccelerator, 0.01f, a, acc);
    expect_bitwise_equal(acc, r);
  }
}

TEST_F(AcceleratorKernels, OptimizerUpdatesAreTheReferencesBitForBit) {
  const AdamWScalars adamw{.decay = 0.9999f, .beta1 = 0.9f, .beta2 = 0.95f, .one_minus_beta1 = 0.1f,
                           .one_minus_beta2 = 0.05f, .bc2_sqrt = 0.3f, .eps = 1e-8f, .neg_step_size = -0.004f};
  const SignumScalars signum{.beta = 0.9f, .one_minus_beta = 0.1f, .decay = 0.999f, .neg_lr = -0.01f, .decays = true};
  for (const std::size_t n : {std::size_t{1}, std::size_t{17}, std::size_t{100003}}) {
    const std::vector<float> g = awkward_values(n, n, true);
    std::vector<float> p = uniform_values(n, n + 1), m = uniform_values(n, n + 2), v = uniform_values(n, n + 3);
    for (float& x : v) x *= x;
    std::vector<float> ap = p, am = m, av = v;
    adamw_update(kRef, adamw, p, g, m, v);
    adamw_update(kAccelerator, adamw, ap, g, am, av);
    expect_bitwise_equal(ap, p);
    expect_bitwise_equal(am, m);
    expect_bitwise_equal(av, v);
    // Every variant: with and without momentum, its first step (a copy), dampening, Nesterov.
    for (const bool momentum : {false, true}) {
      for (const bool first : {false, true}) {
        for (const bool nesterov : {false, true}) {
          if (nesterov && !momentum) continue;
          const SgdScalars sgd{.wd = 0.01f, .mu = 0.9f, .keep = nesterov ? 1.0f : 0.75f, .neg_lr = -0.1f,
                               .decays = true, .momentum = momentum, .first = first, .nesterov = nesterov};
          std::vector<float> b = momentum ? uniform_values(n, n + 4) : std::vector<float>();
          std::vector<float> sp = p, ab = b, asp = p;
          sgd_update(kRef, sgd, sp, g, b);
          sgd_update(kAccelerator, sgd, asp, g, ab);
          expect_bitwise_equal(asp, sp);
          expect_bitwise_equal(ab, b);
        }
      }
    }
    std::vector<float> sm = m, asm_ = m, sp = p, asp = p;
    signum_update(kRef, signum, sp, g, sm);
    signum_update(kAccelerator, signum, asp, g, asm_);
    expect_bitwise_equal(asp, sp);
    expect_bitwise_equal(asm_, sm);
  }
}

TEST_F(AcceleratorKernels, MalformedInputGetsTheReferencesError) {
  const std::vector<float> with_nan = awkward_values(40, 1, true);
  std::vector<std::byte> signs(packed_sign_bytes(40));
  EXPECT_EQ(error_of([&] { pack_signs(kAccelerator, with_nan, signs); }),
            error_of([&] { pack_signs(kRef, with_nan, signs); }));
  const std::vector<std::int64_t> unfit{1, 2, 300, -1};
  std::vector<std::byte> packed(4);
  EXPECT_EQ(error_of([&] { pack_indices(kAccelerator, unfit, IndexWidth::U8, packed); }),
            error_of([&] { pack_indices(kRef, unfit, IndexWidth::U8, packed); }));
  const std::vector<std::byte> payload{std::byte{1}, std::byte{9}, std::byte{200}};
  std::vector<std::int64_t> out(3);
  const std::string unpack_error = error_of([&] { unpack_indices(kRef, payload, IndexWidth::U8, 10, out); });
  EXPECT_NE(unpack_error, "");
  EXPECT_EQ(error_of([&] { unpack_indices(kAccelerator, payload, IndexWidth::U8, 10, out); }), unpack_error);
  std::vector<std::byte> codes(quantized_bytes(40, 8));
  std::vector<float> scales(40);
  const std::string quantize_error = error_of([&] { quantize(kRef, with_nan, 1, 8, Rounding::Nearest, 0, codes, scales); });
  EXPECT_NE(quantize_error, "");
  EXPECT_EQ(error_of([&] { quantize(kAccelerator, with_nan, 1, 8, Rounding::Nearest, 0, codes, scales); }), quantize_error);
  const std::vector<std::byte> bad_codes(quantized_bytes(8, 3), std::byte{0xFF});  // code 7 > 2L = 6
  const std::vector<float> ok_scales{1.0f};
  std::vector<float> decoded(8);
  const std::string code_error = error_of([&] { dequantize(kRef, bad_codes, ok_scales, 8, 3, decoded); });
  EXPECT_NE(code_error.find("code 7"), std::string::npos) << code_error;
  EXPECT_EQ(error_of([&] { dequantize(kAccelerator, bad_codes, ok_scales, 8, 3, decoded); }), code_error);
  // Indices checked on the backend (first_outside), the first culprit named.
  std::vector<std::int64_t> indices(1009);
  for (std::size_t p = 0; p < indices.size(); ++p) indices[p] = static_cast<std::int64_t>((p * 7) % 13);
  indices[400] = -3;
  indices[700] = 13;
  const std::vector<float> values = awkward_values(indices.size(), 2, false);
  std::vector<float> slots(13);
  const std::string scatter_error = error_of([&] { scatter_add(kRef, indices, values, slots); });
  EXPECT_NE(scatter_error.find("index -3 (at position 400)"), std::string::npos) << scatter_error;
  EXPECT_EQ(error_of([&] { scatter_add(kAccelerator, indices, values, slots); }), scatter_error);
  std::vector<float> gathered(indices.size());
  EXPECT_EQ(error_of([&] { gather(kAccelerator, indices, slots, gathered); }),
            error_of([&] { gather(kRef, indices, slots, gathered); }));
  const std::vector<std::int64_t> in_blocks{0, 2, 1, 5};
  const std::vector<float> block_values{1.0f, 2.0f, 3.0f, 4.0f};
  const std::vector<BlockPairs> lists = {{in_blocks, block_values}};
  std::vector<float> blocks(8);
  const std::string block_error = error_of([&] { scatter_mean_per_block(kRef, 4, 2, lists, blocks); });
  EXPECT_NE(block_error.find("index 5 (at position 3)"), std::string::npos) << block_error;
  EXPECT_EQ(error_of([&] { scatter_mean_per_block(kAccelerator, 4, 2, lists, blocks); }), block_error);
}

#ifdef LOWCOMM_TEST_CUDA_DEVICE_MEMORY
// Spans of device memory are used in place (kernels/cuda/cuda_backend.hpp): the same results as
// from host spans, which the backend stages.
template <class T>
class DeviceArray {
 public:
  explicit DeviceArray(std::size_t n) : n_(n) { EXPECT_EQ(cudaMalloc(&data_, n * sizeof(T)), cudaSuccess); }
  explicit DeviceArray(const std::vector<T>& host) : DeviceArray(host.size()) {
    EXPECT_EQ(cudaMemcpy(data_, host.data(), n_ * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
  }
  ~DeviceArray() { cudaFree(data_); }
  std::span<T> span() { return {data_, n_}; }
  std::vector<T> host() const {
    std::vector<T> out(n_);
    EXPECT_EQ(cudaMemcpy(out.data(), data_, n_ * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
    return out;
  }

 private:
  T* data_ = nullptr;
  std::size_t n_;
};

TEST_F(AcceleratorKernels, DeviceSpansAreUsedInPlace) {
  const std::vector<float> v = awkward_values(10007, 3, true);
  const std::int64_t k = 100;
  std::vector<std::int64_t> ri(k);
  std::vector<float> rv(k);
  topk_global(kRef, v, k, ri, rv);
  DeviceArray<float> values(v), selected(static_cast<std::size_t>(k));
  DeviceArray<std::int64_t> indices(static_cast<std::size_t>(k));
  topk_global(kAccelerator, values.span(), k, indices.span(), selected.span());
  EXPECT_EQ(indices.host(), ri);
  expect_bitwise_equal(selected.host(), rv);

  std::vector<std::byte> r(v.size() * 2);
  encode_values(kRef, v, ValueType::BF16, r);
  DeviceArray<std::byte> encoded(r.size());
  encode_values(kAccelerator, values.span(), ValueType::BF16, encoded.span());
  EXPECT_EQ(encoded.host(), r);

  // The strategies' arithmetic and the optimizers' updates on device spans, in place.
  const AdamWScalars adamw{.decay = 0.9999f, .beta1 = 0.9f, .beta2 = 0.95f, .one_minus_beta1 = 0.1f,
                           .one_minus_beta2 = 0.05f, .bc2_sqrt = 0.3f, .eps = 1e-8f, .neg_step_size = -0.004f};
  const std::vector<float> g = awkward_values(v.size(), 4, false);
  std::vector<float> p = uniform_values(v.size(), 5), m(v.size(), 0.0f), sq(v.size(), 0.0f);
  DeviceArray<float> dg(g), dp(p), dm(m), dsq(sq);
  adamw_update(kRef, adamw, p, g, m, sq);
  adamw_update(kAccelerator, adamw, dp.span(), dg.span(), dm.span(), dsq.span());
  expect_bitwise_equal(dp.host(), p);
  expect_bitwise_equal(dsq.host(), sq);
  scale_add(kRef, 0.999f, m, g, m);
  scale_add(kAccelerator, 0.999f, dm.span(), dg.span(), dm.span());
  expect_bitwise_equal(dm.host(), m);
  subtract_scaled_sign(kRef, 0.01f, m, p);
  subtract_scaled_sign(kAccelerator, 0.01f, dm.span(), dp.span());
  expect_bitwise_equal(dp.host(), p);

  // A scatter whose indices are device memory: checked on the device, the culprit named.
  std::vector<std::int64_t> slots_of(v.size());
  for (std::size_t i = 0; i < slots_of.size(); ++i) slots_of[i] = static_cast<std::int64_t>((i * 31) % 101);
  std::vector<float> summed(101, 0.0f);
  scatter_add(kRef, slots_of, v, summed);
  DeviceArray<std::int64_t> device_slots(slots_of);
  DeviceArray<float> device_summed(std::vector<float>(101, 0.0f));
  scatter_add(kAccelerator, device_slots.span(), values.span(), device_summed.span());
  expect_bitwise_equal(device_summed.host(), summed);
  slots_of[5000] = 101;
  DeviceArray<std::int64_t> device_culprit(slots_of);
  EXPECT_EQ(error_of([&] { scatter_add(kAccelerator, device_culprit.span(), values.span(), device_summed.span()); }),
            error_of([&] { scatter_add(kRef, slots_of, v, summed); }));
}
#endif

}  // namespace
}  // namespace lowcomm::kernels::test
