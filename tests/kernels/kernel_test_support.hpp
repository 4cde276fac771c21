#pragma once
// Helpers shared by the kernel tests.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "lowcomm/error.hpp"
#include "lowcomm/kernels/backend.hpp"

namespace lowcomm::kernels::test {

// `call` must throw lowcomm::Error whose message contains both parts.
template <typename F>
void expect_error(F&& call, const std::string& part1, const std::string& part2 = "") {
  try {
    call();
    ADD_FAILURE() << "expected lowcomm::Error mentioning '" << part1 << "'";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(part1), std::string::npos) << message;
    EXPECT_NE(message.find(part2), std::string::npos) << message;
  }
}

// `call` runs `kernel` on Backend::Cuda where this process cannot compute on CUDA: in a build
// without it the error names the kernel and says how to build it; in a CUDA build on a machine
// without a usable device (a login node) it says why there is none. Where a device is usable
// there is nothing to refuse, and the test is skipped.
template <typename F>
void expect_refused_on_cuda(F&& call, const std::string& kernel) {
  const std::string reason = unavailable_reason(Backend::Cuda);
  if (reason.empty()) GTEST_SKIP() << "a CUDA device is usable here: " << kernel << " runs on it";
  expect_error(call, in_this_build(Backend::Cuda) ? "" : kernel + " has no cuda implementation", reason);
}

// Equal bit for bit (so +0 differs from -0), except that any NaN equals any NaN: IEEE 754 leaves
// a NaN result's sign and payload open, and backends differ there (x86 passes an input NaN's
// payload on; an NVIDIA GPU returns its canonical NaN, 0x7fffffff, seen on an H200).
inline void expect_bitwise_equal(const std::vector<float>& a, const std::vector<float>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) && std::isnan(b[i])) continue;
    ASSERT_EQ(std::bit_cast<std::uint32_t>(a[i]), std::bit_cast<std::uint32_t>(b[i]))
        << "element " << i << ": " << a[i] << " vs " << b[i];
  }
}

// n values uniform in [-1, 1), reproducible from the seed.
inline std::vector<float> uniform_values(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = uniform(rng);
  return v;
}

}  // namespace lowcomm::kernels::test
