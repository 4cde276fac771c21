#include "lowcomm/kernels/elementwise.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <initializer_list>
#include <string_view>

#include "../elementwise_rules.hpp"
#include "lowcomm/error.hpp"
#if LOWCOMM_HAVE_KOKKOS
#include "../kokkos/kokkos_backend.hpp"
#endif
#if LOWCOMM_HAVE_CUDA
#include "../cuda/cuda_backend.hpp"
#endif

namespace lowcomm::kernels {

namespace {

// Elements below which the Cpu backend stays on one thread: the loops stream memory at several
// elements per nanosecond.
constexpr std::int64_t kParallelElements = std::int64_t{1} << 15;

// Each input has the output's size and is either the output itself or apart from it.
void check_elementwise(std::string_view kernel, std::span<const float> out,
                       std::initializer_list<std::span<const float>> inputs) {
  for (const std::span<const float> in : inputs) {
    if (in.size() != out.size()) {
      throw Error(fmt::format("{}: input has {} elements but output {}", kernel, in.size(), out.size()));
    }
    if (in.empty() || in.data() == out.data()) continue;
    const auto a = reinterpret_cast<std::uintptr_t>(in.data());
    const auto b = reinterpret_cast<std::uintptr_t>(out.data());
    if (a < b + out.size_bytes() && b < a + in.size_bytes()) {
      throw Error(fmt::format("{}: input and output overlap without being the same span", kernel));
    }
  }
}

// Whether `backend` runs these maps as the Cpu loops: Cpu itself, and Kokkos in a device
// execution space, which would copy the strategies' host-memory state there and back per call
// (kokkos_backend.hpp).
bool uses_cpu_loops(Backend backend) {
#if LOWCOMM_HAVE_KOKKOS
  if (backend == Backend::Kokkos) return !kokkos_backend::reads_host_memory();
#endif
  return backend == Backend::Cpu;
}

// rule(i) for every i < n: in order on Reference, vectorised and threaded on Cpu (element-wise, so
// the same bits either way). Returns false for the other backends.
template <class Rule>
bool map_on_host(Backend backend, std::size_t size, const Rule& rule) {
  const auto n = static_cast<std::int64_t>(size);
  if (backend == Backend::Reference) {
    for (std::int64_t i = 0; i < n; ++i) rule(i);
    return true;
  }
  if (!uses_cpu_loops(backend)) return false;
  // A static split, so that first-touch pages stay with the thread that later writes them in the
  // other kernels' static partitions (fill zeroes a model's half-gigabyte of gradients).
#pragma omp parallel for simd schedule(static) if (n > kParallelElements)
  for (std::int64_t i = 0; i < n; ++i) rule(i);
  return true;
}

}  // namespace

void sign(Backend backend, std::span<const float> in, std::span<float> out) {
  check_elementwise("sign", out, {in});
  if (backend == Backend::Reference) {
    // The definition, spelt out: NaN compares false both ways, so it lands with the zeros.
    for (std::size_t i = 0; i < in.size(); ++i) {
      if (in[i] > 0.0f) {
        out[i] = 1.0f;
      } else if (in[i] < 0.0f) {
        out[i] = -1.0f;
      } else {
        out[i] = 0.0f;  // +0, -0 and NaN
      }
    }
    return;
  }
  const float* x = in.data();
  float* y = out.data();
  if (map_on_host(backend, in.size(), [=](std::int64_t i) { y[i] = sign_of(x[i]); })) return;
#if LOWCOMM_HAVE_KOKKOS
  if (backend == Backend::Kokkos) return kokkos_backend::sign(in, out);
#endif
#if LOWCOMM_HAVE_CUDA
  if (backend == Backend::Cuda) return cuda_backend::sign(in, out);
#endif
  unsupported("sign", backend);
}

void fill(Backend backend, std::span<float> out, float value) {
  float* o = out.data();
  if (map_on_host(backend, out.size(), [=](std::int64_t i) { o[i] = value; })) return;
#if LOWCOMM_HAVE_KOKKOS
  if (backend == Backend::Kokkos) return kokkos_backend::fill(out, value);
#endif
#if LOWCOMM_HAVE_CUDA
  if (backend == Backend::Cuda) return cuda_backend::fill(out, value);
#endif
  unsupported("fill", backend);
}

void scale(Backend backend, float alpha, std::span<const float> in, std::span<float> out) {
  check_elementwise("scale", out, {in});
  const float* x = in.data();
  float* y = out.data();
  if (map_on_host(backend, out.size(), [=](std::int64_t i) { y[i] = scaled(alpha, x[i]); })) return;
#if LOWCOMM_HAVE_KOKKOS
  if (backend == Backend::Kokkos) return kokkos_backend::scale(alpha, in, out);
#endif
#if LOWCOMM_HAVE_CUDA
  if (backend == Backend::Cuda) return cuda_backend::scale(alpha, in, out);
#endif
  unsupported("scale", backend);
}

void scale_add(Backend backend, float alpha, std::span<const float> a, std::span<const float> b,
               std::span<float> out) {
  check_elementwise("scale_add", out, {a, b});
  const float* x = a.data();
  const float* y = b.data();
  float* z = out.data();
  if (map_on_host(backend, out.size(), [=](std::int64_t i) { z[i] = scaled_sum(alpha, x[i], y[i]); })) return;
#if LOWCOMM_HAVE_KOKKOS
  if (backend == Backend::Kokkos) return kokkos_backend::scale_add(alpha, a, b, out);
#endif
#if LOWCOMM_HAVE_CUDA
  if (backend == Backend::Cuda) return cuda_backend::scale_add(alpha, a, b, out);
#endif
  unsupported("scale_add", backend);
}

void subtract(Backend backend, std::span<const float> a, std::span<const float> b, std::span<float> out) {
  check_elementwise("subtract", out, {a, b});
  const float* x = a.data();
  const float* y = b.data();
  float* z = out.data();
  if (map_on_host(backend, out.size(), [=](std::int64_t i) { z[i] = difference(x[i], y[i]); })) return;
#if LOWCOMM_HAVE_KOKKOS
  if (backend == Backend::Kokkos) return kokkos_backend::subtract(a, b, out);
#endif
#if LOWCOMM_HAVE_CUDA
  if (backend == Backend::Cuda) return cuda_backend::subtract(a, b, out);
#endif
  unsupported("subtract", backend);
}

void subtract_scaled_sign(Backend backend, float alpha, std::span<const float> g, std::span<float> x) {
  check_elementwise("subtract_scaled_sign", x, {g});
  const float* s = g.data();
  float* p = x.data();
  if (map_on_host(backend, x.size(), [=](std::int64_t i) { p[i] = sign_step(alpha, s[i], p[i]); })) return;
#if LOWCOMM_HAVE_KOKKOS
  if (backend == Backend::Kokkos) return kokkos_backend::subtract_scaled_sign(alpha, g, x);
#endif
#if LOWCOMM_HAVE_CUDA
  if (backend == Backend::Cuda) return cuda_backend::subtract_scaled_sign(alpha, g, x);
#endif
  unsupported("subtract_scaled_sign", backend);
}

}  // namespace lowcomm::kernels
