// elementwise.hpp's definition: each element's rule (../elementwise_rules.hpp), in order.
#include <cstdint>

#include "../backend_kernels.hpp"
#include "../elementwise_rules.hpp"

namespace lowcomm::kernels::reference_backend {

namespace {

// rule(i) for every i < n, in order.
template <class Rule>
void map(std::size_t size, const Rule& rule) {
  const auto n = static_cast<std::int64_t>(size);
  for (std::int64_t i = 0; i < n; ++i) rule(i);
}

}  // namespace

void sign(std::span<const float> in, std::span<float> out) {
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

}  // namespace lowcomm::kernels::reference_backend
