// elementwise.hpp's maps, one element per work item, each the Reference's rule
// (../elementwise_rules.hpp). In a space that cannot read host memory the inputs would be copied
// to the device and the output back for each call (kokkos_views.hpp); the operands are the
// strategies' host-memory state, so there each map runs the Cpu loops instead (the same bits).
#include <Kokkos_Core.hpp>

#include "../elementwise_rules.hpp"
#include "kokkos_views.hpp"

namespace lowcomm::kernels::kokkos_backend {

namespace {

Range elements(std::size_t n) { return Range(0, static_cast<std::int64_t>(n)); }

}  // namespace

void fill(std::span<float> out, float value) {
  if (!reads_host_memory()) return cpu_backend::fill(out, value);
  Output<float> result(out);
  const auto y = result.view();
  Kokkos::parallel_for("lowcomm::fill", elements(out.size()), KOKKOS_LAMBDA(const std::int64_t i) { y(i) = value; });
  result.finish();
}

void sign(std::span<const float> in, std::span<float> out) {
  if (!reads_host_memory()) return cpu_backend::sign(in, out);
  const auto x = input(in);
  Output<float> result(out);
  const auto y = result.view();
  Kokkos::parallel_for("lowcomm::sign", elements(out.size()),
                       KOKKOS_LAMBDA(const std::int64_t i) { y(i) = sign_of(x(i)); });
  result.finish();
}

void scale(float alpha, std::span<const float> in, std::span<float> out) {
  if (!reads_host_memory()) return cpu_backend::scale(alpha, in, out);
  const auto x = input(in);
  Output<float> result(out);
  const auto y = result.view();
  Kokkos::parallel_for("lowcomm::scale", elements(out.size()),
                       KOKKOS_LAMBDA(const std::int64_t i) { y(i) = scaled(alpha, x(i)); });
  result.finish();
}

void scale_add(float alpha, std::span<const float> a, std::span<const float> b, std::span<float> out) {
  if (!reads_host_memory()) return cpu_backend::scale_add(alpha, a, b, out);
  const auto x = input(a);
  const auto y = input(b);
  Output<float> result(out);
  const auto z = result.view();
  Kokkos::parallel_for("lowcomm::scale_add", elements(out.size()),
                       KOKKOS_LAMBDA(const std::int64_t i) { z(i) = scaled_sum(alpha, x(i), y(i)); });
  result.finish();
}

void subtract(std::span<const float> a, std::span<const float> b, std::span<float> out) {
  if (!reads_host_memory()) return cpu_backend::subtract(a, b, out);
  const auto x = input(a);
  const auto y = input(b);
  Output<float> result(out);
  const auto z = result.view();
  Kokkos::parallel_for("lowcomm::subtract", elements(out.size()),
                       KOKKOS_LAMBDA(const std::int64_t i) { z(i) = difference(x(i), y(i)); });
  result.finish();
}

void subtract_scaled_sign(float alpha, std::span<const float> g, std::span<float> x) {
  if (!reads_host_memory()) return cpu_backend::subtract_scaled_sign(alpha, g, x);
  const auto s = input(g);
  Output<float> result(x, true);
  const auto p = result.view();
  Kokkos::parallel_for("lowcomm::subtract_scaled_sign", elements(x.size()),
                       KOKKOS_LAMBDA(const std::int64_t i) { p(i) = sign_step(alpha, s(i), p(i)); });
  result.finish();
}

}  // namespace lowcomm::kernels::kokkos_backend
