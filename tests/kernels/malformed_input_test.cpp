// Every decoder fed random bytes, random truncations and random corruptions of valid payloads:
// each call must either throw lowcomm::Error or succeed with output that satisfies its contract,
// never crash or touch memory outside the spans. Its value is in the sanitizer build
// (`bash scripts/test.sh debug`), where an out-of-bounds access aborts the test. The spans are
// exact-size heap copies so that AddressSanitizer sees one byte past their end.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "lowcomm/error.hpp"
#include "lowcomm/kernels/pack.hpp"
#include "lowcomm/kernels/quantize.hpp"

namespace lowcomm::kernels {
namespace {

constexpr Backend kBackends[] = {Backend::Reference, Backend::Cpu};
constexpr int kTrials = 400;

class Fuzzer {
 public:
  explicit Fuzzer(unsigned seed) : rng_(seed) {}

  std::size_t below(std::size_t n) {
    return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng_);
  }

  // Mostly small sizes, where boundaries are dense, and now and then one past the threshold at
  // which the Cpu kernels start threads.
  std::size_t count() { return below(8) == 0 ? 20000 + below(50000) : below(70); }

  std::vector<std::byte> bytes(std::size_t n) {
    std::vector<std::byte> out(n);
    for (auto& b : out) b = static_cast<std::byte>(below(256));
    return out;
  }

  // Random bit patterns: NaNs, infinities, negatives and subnormals all occur.
  std::vector<float> floats(std::size_t n) {
    std::vector<float> out(n);
    for (auto& f : out) {
      const auto bits = static_cast<std::uint32_t>(below(std::size_t{1} << 32));
      std::memcpy(&f, &bits, sizeof f);
    }
    return out;
  }

  // A valid payload mangled one of three ways: cut short, extended, or with bytes overwritten.
  std::vector<std::byte> mangle(std::vector<std::byte> payload) {
    switch (below(3)) {
      case 0: payload.resize(payload.empty() ? 0 : below(payload.size())); break;
      case 1: payload.resize(payload.size() + 1 + below(9), std::byte{0}); break;
      default:
        for (std::size_t flips = 1 + below(4); flips > 0 && !payload.empty(); --flips) {
          payload[below(payload.size())] = static_cast<std::byte>(below(256));
        }
    }
    return payload;
  }

 private:
  std::mt19937_64 rng_;
};

// Runs a decoder; it may throw lowcomm::Error, and says whether it succeeded.
template <typename Decode>
bool decodes(Decode&& decode) {
  try {
    decode();
    return true;
  } catch (const Error&) {
    return false;
  }
}

TEST(MalformedInput, UnpackIndicesThrowsOrDecodesInRange) {
  Fuzzer fuzz(1);
  constexpr IndexWidth kWidths[] = {IndexWidth::U8, IndexWidth::U16, IndexWidth::U32,
                                    IndexWidth::I64};
  for (int trial = 0; trial < kTrials; ++trial) {
    const IndexWidth width = kWidths[fuzz.below(4)];
    const std::size_t count = fuzz.count();
    const std::uint64_t limit = fuzz.below(4) == 0 ? ~std::uint64_t{0} : 1 + fuzz.below(70000);
    std::vector<std::byte> in = fuzz.below(2) == 0
                                    ? fuzz.bytes(fuzz.below(packed_index_bytes(count, width) + 9))
                                    : fuzz.bytes(packed_index_bytes(count, width));
    if (fuzz.below(2) == 0 && !in.empty()) in = fuzz.mangle(in);
    for (Backend backend : kBackends) {
      std::vector<std::int64_t> out(count);
      if (!decodes([&] { unpack_indices(backend, in, width, limit, out); })) continue;
      for (std::int64_t index : out) {
        ASSERT_GE(index, 0);
        ASSERT_LT(static_cast<std::uint64_t>(index), limit);
      }
    }
  }
}

TEST(MalformedInput, UnpackSignsThrowsOrDecodesPlusMinusOne) {
  Fuzzer fuzz(2);
  for (int trial = 0; trial < kTrials; ++trial) {
    const std::size_t count = fuzz.count();
    std::vector<std::byte> in = fuzz.bytes(packed_sign_bytes(count));
    if (fuzz.below(2) == 0) in = fuzz.mangle(in);
    for (Backend backend : kBackends) {
      std::vector<float> out(count);
      if (!decodes([&] { unpack_signs(backend, in, out); })) continue;
      for (float v : out) ASSERT_TRUE(v == 1.0f || v == -1.0f);
    }
  }
}

TEST(MalformedInput, DequantizeThrowsOrDecodesWithinTheScale) {
  Fuzzer fuzz(3);
  for (int trial = 0; trial < kTrials; ++trial) {
    const std::size_t count = fuzz.count();
    const std::size_t group = 1 + fuzz.below(100);
    const int bits = static_cast<int>(fuzz.below(10));  // 0 and 9 are invalid
    const std::size_t groups = (count + group - 1) / group + (fuzz.below(8) == 0 ? 1 : 0);
    std::vector<std::byte> codes;
    std::vector<float> scales;
    if (bits >= 1 && bits <= 8 && fuzz.below(2) == 0) {
      // A valid payload from the encoder, then possibly mangled.
      std::vector<float> x(count);
      for (auto& v : x) v = static_cast<float>(fuzz.below(2001)) - 1000.0f;
      codes.resize(quantized_bytes(count, bits));
      scales.resize((count + group - 1) / group);
      quantize(Backend::Cpu, x, group, bits, Rounding::Nearest, 0, codes, scales);
      codes = fuzz.mangle(codes);
    } else {
      codes = fuzz.bytes(fuzz.below(count + 9));
      scales = fuzz.below(2) == 0 ? fuzz.floats(groups) : std::vector<float>(groups, 0.5f);
    }
    for (Backend backend : kBackends) {
      std::vector<float> out(count);
      if (!decodes([&] { dequantize(backend, codes, scales, group, bits, out); })) continue;
      const float levels = bits == 1 ? 1.0f : static_cast<float>((1 << (bits - 1)) - 1);
      for (std::size_t i = 0; i < count; ++i) {
        ASSERT_LE(std::fabs(out[i]), levels * scales[i / group]) << i;
      }
    }
  }
}

}  // namespace
}  // namespace lowcomm::kernels
