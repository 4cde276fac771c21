// elementwise.hpp on the Cpu backend: the Reference's rule for each element
// (../elementwise_rules.hpp), vectorised and threaded (element-wise, so the same bits). Kokkos in
// a space that cannot read host memory runs these loops too (kokkos/elementwise.cpp).
#include <cstdint>

#include "../backend_kernels.hpp"
#include "../elementwise_rules.hpp"

namespace lowcomm::kernels::cpu_backend {

namespace {

// Elements below which the Cpu backend stays on one thread: the loops stream memory at several
// elements per nanosecond.
constexpr std::int64_t kParallelElements = std::int64_t{1} << 15;

// rule(i) for every i < n, vectorised and threaded.
template <class Rule>
void map(std::size_t size, const Rule& rule) {
  const auto n = static_cast<std::int64_t>(size);
  // A static split, so that first-touch pages stay with the thread that later writes them in the
  // other kernels' static partitions (fill zeroes a model's half-gigabyte of gradients).
#pragma omp parallel for simd schedule(static) if (n > kParallelElements)
  for (std::int64_t i = 0; i < n; ++i) rule(i);
}

}  // namespace

void sign(std::span<const float> in, std::span<float> out) {
  const float* x = in.data();
  float* y = out.data();
  map(in.size(), [=](std::int64_t i) { y[i] = sign_of(x[i]); });
}

void fill(std::span<float> out, float value) {
  float* o = out.data();
  map(out.size(), [=](std::int64_t i) { o[i] = value; });
}

void scale(float alpha, std::span<const float> in, std::span<float> out) {
  const float* x = in.data();
  float* y = out.data();
  map(out.size(), [=](std::int64_t i) { y[i] = scaled(alpha, x[i]); });
}

void scale_add(float alpha, std::span<const float> a, std::span<const float> b, std::span<float> out) {
  const float* x = a.data();
  const float* y = b.data();
  float* z = out.data();
  map(out.size(), [=](std::int64_t i) { z[i] = scaled_sum(alpha, x[i], y[i]); });
}

void subtract(std::span<const float> a, std::span<const float> b, std::span<float> out) {
  const float* x = a.data();
  const float* y = b.data();
  float* z = out.data();
  map(out.size(), [=](std::int64_t i) { z[i] = difference(x[i], y[i]); });
}

void subtract_scaled_sign(float alpha, std::span<const float> g, std::span<float> x) {
  const float* s = g.data();
  float* p = x.data();
  map(x.size(), [=](std::int64_t i) { p[i] = sign_step(alpha, s[i], p[i]); });
}

}  // namespace lowcomm::kernels::cpu_backend
