// The elementwise maps (elementwise.hpp): sign's special values, and every map on Cpu bitwise the
// Reference's at several thread counts, in place and not, with its size and overlap errors.
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
using test::expect_refused_on_cuda;

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
  expect_refused_on_cuda([&] { sign(Backend::Cuda, buffer, buffer); }, "sign");
}

// Random values with zeros of both signs, so the sign step's sign(0) = 0 is exercised.
std::vector<float> values_with_zeros(std::size_t n, std::uint64_t seed) {
  std::vector<float> v = test::uniform_values(n, seed);
  for (std::size_t i = 0; i < n; i += 5) v[i] = i % 2 ? -0.0f : 0.0f;
  return v;
}

TEST(Maps, ComputeTheirDefinitions) {
  const std::vector<float> a{2.0f, -1.5f, 0.0f, 3.0f}, b{1.0f, 1.0f, -0.0f, -4.0f};
  std::vector<float> out(4);
  for (Backend backend : {Backend::Reference, Backend::Cpu}) {
    scale(backend, 0.5f, a, out);
    EXPECT_EQ(out, (std::vector<float>{1.0f, -0.75f, 0.0f, 1.5f}));
    scale_add(backend, 0.5f, a, b, out);
    EXPECT_EQ(out, (std::vector<float>{2.0f, 0.25f, 0.0f, -2.5f}));
    subtract(backend, a, b, out);
    EXPECT_EQ(out, (std::vector<float>{1.0f, -2.5f, 0.0f, 7.0f}));
    std::vector<float> x{1.0f, 1.0f, 1.0f, 1.0f};
    subtract_scaled_sign(backend, 0.25f, a, x);  // signs +1, −1, 0, +1
    EXPECT_EQ(x, (std::vector<float>{0.75f, 1.25f, 1.0f, 0.75f}));
  }
}

TEST(Maps, CpuMatchesReferenceBitwiseInPlaceAndNot) {
  for (int threads : {1, 2, 3}) {
    omp_set_num_threads(threads);
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{13}, std::size_t{1000003}}) {
      const std::vector<float> a = values_with_zeros(n, n + 1), b = values_with_zeros(n, n + 2);
      const float alpha = 0.999f;
      std::vector<float> ref(n), cpu(n);
      scale(Backend::Reference, alpha, a, ref);
      scale(Backend::Cpu, alpha, a, cpu);
      expect_bitwise_equal(cpu, ref);
      std::vector<float> in_place = a;
      scale(Backend::Cpu, alpha, in_place, in_place);
      expect_bitwise_equal(in_place, ref);

      scale_add(Backend::Reference, alpha, a, b, ref);
      scale_add(Backend::Cpu, alpha, a, b, cpu);
      expect_bitwise_equal(cpu, ref);
      in_place = b;
      scale_add(Backend::Cpu, alpha, a, in_place, in_place);
      expect_bitwise_equal(in_place, ref);

      subtract(Backend::Reference, a, b, ref);
      subtract(Backend::Cpu, a, b, cpu);
      expect_bitwise_equal(cpu, ref);
      in_place = b;
      subtract(Backend::Cpu, a, in_place, in_place);
      expect_bitwise_equal(in_place, ref);

      ref = b;
      cpu = b;
      subtract_scaled_sign(Backend::Reference, alpha, a, ref);
      subtract_scaled_sign(Backend::Cpu, alpha, a, cpu);
      expect_bitwise_equal(cpu, ref);
    }
  }
  omp_set_num_threads(omp_get_num_procs());
}

TEST(Maps, RejectMismatchedSizesAndPartialOverlap) {
  std::vector<float> buffer(10, 1.0f), out(9);
  const std::span<const float> first = std::span<const float>(buffer).first(5);
  const std::span<float> shifted = std::span(buffer).subspan(2, 5);
  for (Backend backend : {Backend::Reference, Backend::Cpu}) {
    expect_error([&] { scale(backend, 2.0f, buffer, out); }, "scale", "10 elements but output 9");
    expect_error([&] { scale_add(backend, 2.0f, out, buffer, out); }, "scale_add", "10 elements but output 9");
    expect_error([&] { subtract(backend, first, first, shifted); }, "subtract", "overlap");
    expect_error([&] { subtract_scaled_sign(backend, 1.0f, first, shifted); }, "subtract_scaled_sign", "overlap");
  }
  EXPECT_EQ(buffer, std::vector<float>(10, 1.0f));
}

}  // namespace
}  // namespace lowcomm::kernels
