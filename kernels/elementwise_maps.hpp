#pragma once
// elementwise.hpp's maps on the host, written once over a backend's loop: `map(n, rule)` runs
// rule(i) for every i < n (in order on the Reference, vectorised and threaded on Cpu). The rules
// are elementwise_rules.hpp's, element by element, so every loop gives the same bits.
#include <span>

#include "elementwise_rules.hpp"

namespace lowcomm::kernels::detail {

template <class Map>
void map_sign(const Map& map, std::span<const float> in, std::span<float> out) {
  const float* x = in.data();
  float* y = out.data();
  map(in.size(), [=](std::int64_t i) { y[i] = sign_of(x[i]); });
}

template <class Map>
void map_fill(const Map& map, std::span<float> out, float value) {
  float* o = out.data();
  map(out.size(), [=](std::int64_t i) { o[i] = value; });
}

template <class Map>
void map_scale(const Map& map, float alpha, std::span<const float> in, std::span<float> out) {
  const float* x = in.data();
  float* y = out.data();
  map(out.size(), [=](std::int64_t i) { y[i] = scaled(alpha, x[i]); });
}

template <class Map>
void map_scale_add(const Map& map, float alpha, std::span<const float> a, std::span<const float> b,
                   std::span<float> out) {
  const float* x = a.data();
  const float* y = b.data();
  float* z = out.data();
  map(out.size(), [=](std::int64_t i) { z[i] = scaled_sum(alpha, x[i], y[i]); });
}

template <class Map>
void map_subtract(const Map& map, std::span<const float> a, std::span<const float> b, std::span<float> out) {
  const float* x = a.data();
  const float* y = b.data();
  float* z = out.data();
  map(out.size(), [=](std::int64_t i) { z[i] = difference(x[i], y[i]); });
}

template <class Map>
void map_subtract_scaled_sign(const Map& map, float alpha, std::span<const float> g, std::span<float> x) {
  const float* s = g.data();
  float* p = x.data();
  map(x.size(), [=](std::int64_t i) { p[i] = sign_step(alpha, s[i], p[i]); });
}

}  // namespace lowcomm::kernels::detail
