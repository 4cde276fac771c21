// elementwise.hpp on the Cpu backend: the Reference's rule for each element
// (../elementwise_rules.hpp), vectorised and threaded (element-wise, so the same bits). Kokkos in
// a space that cannot read host memory runs these loops too (kokkos/elementwise.cpp).
#include <cstdint>

#include "../backend_kernels.hpp"
#include "../elementwise_maps.hpp"

namespace lowcomm::kernels::cpu_backend {

namespace {

// Elements below which the Cpu backend stays on one thread: the loops stream memory at several
// elements per nanosecond.
constexpr std::int64_t kParallelElements = std::int64_t{1} << 15;

// rule(i) for every i < n, vectorised and threaded.
constexpr auto map = [](std::size_t size, const auto& rule) {
  const auto n = static_cast<std::int64_t>(size);
  // A static split, so that first-touch pages stay with the thread that later writes them in the
  // other kernels' static partitions (fill zeroes a model's half-gigabyte of gradients).
#pragma omp parallel for simd schedule(static) if (n > kParallelElements)
  for (std::int64_t i = 0; i < n; ++i) rule(i);
};

}  // namespace

void sign(std::span<const float> in, std::span<float> out) { detail::map_sign(map, in, out); }

void fill(std::span<float> out, float value) { detail::map_fill(map, out, value); }

void scale(float alpha, std::span<const float> in, std::span<float> out) { detail::map_scale(map, alpha, in, out); }

void scale_add(float alpha, std::span<const float> a, std::span<const float> b, std::span<float> out) {
  detail::map_scale_add(map, alpha, a, b, out);
}

void subtract(std::span<const float> a, std::span<const float> b, std::span<float> out) {
  detail::map_subtract(map, a, b, out);
}

void subtract_scaled_sign(float alpha, std::span<const float> g, std::span<float> x) {
  detail::map_subtract_scaled_sign(map, alpha, g, x);
}

}  // namespace lowcomm::kernels::cpu_backend
