// elementwise.hpp's definition: each element's rule (../elementwise_rules.hpp), in order.
#include <cstdint>

#include "../backend_kernels.hpp"
#include "../elementwise_maps.hpp"

namespace lowcomm::kernels::reference_backend {

namespace {

// rule(i) for every i < n, in order.
constexpr auto map = [](std::size_t size, const auto& rule) {
  const auto n = static_cast<std::int64_t>(size);
  for (std::int64_t i = 0; i < n; ++i) rule(i);
};

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

}  // namespace lowcomm::kernels::reference_backend
