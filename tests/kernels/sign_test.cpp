#include "lowcomm/kernels/elementwise.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernel_test_support.hpp"
#include "lowcomm/error.hpp"

namespace lowcomm::kernels {
namespace {

using test::expect_bitwise_equal;
using test::expect_error;

TEST(Sign, SpecialValues) {
  constexpr float nan = std::numeric_limits<float>::quiet_NaN();
  constexpr float inf = std::numeric_limits<float>::infinity();
  constexpr float tiny = std::numeric_limits<float>::denorm_min();
  const std::vector<float> in = {2.5f, -3.0f, 0.0f, -0.0f, nan, -nan, inf, -inf, tiny, -tiny};
  // Every zero is +0: a -0 would still compare equal, so the bits are checked.
  const std::vector<float> expected = {1, -1, 0, 0, 0, 0, 1, -1, 1, -1};
  for (Backend backend : {Backend::Reference, Backend::Cpu}) {
    std::vector<float> out(in.size(), 9.0f);
    sign(backend, in, out);
    expect_bitwise_equal(out, expected);
  }
}

TEST(Sign, CpuMatchesReferenceBitwiseAndRunsInPlace) {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (int threads : {1, 2, 3}) {
    omp_set_num_threads(threads);
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{13}, std::size_t{1000003}}) {
      std::vector<float> in(n);
      for (float& x : in) x = rng() % 5 == 0 ? 0.0f : uniform(rng);
      std::vector<float> ref(n);
      std::vector<float> cpu(n);
      sign(Backend::Reference, in, ref);
      sign(Backend::Cpu, in, cpu);
      expect_bitwise_equal(ref, cpu);
      sign(Backend::Cpu, in, in);
      expect_bitwise_equal(ref, in);
    }
  }
  omp_set_num_threads(omp_get_num_procs());
}

TEST(SignErrors, NameTheKernelAndTheProblem) {
  std::vector<float> buffer(10, 1.0f);
  std::vector<float> out(9);
  for (Backend backend : {Backend::Reference, Backend::Cpu}) {
    expect_error([&] { sign(backend, buffer, out); }, "sign", "10 elements but output 9");
    expect_error(
        [&] {
          sign(backend, std::span<const float>(buffer).first(5), std::span(buffer).subspan(2, 5));
        },
        "sign", "overlap");
  }
  expect_error([&] { sign(Backend::Cuda, buffer, buffer); }, "sign", "cuda");
}

}  // namespace
}  // namespace lowcomm::kernels
