#include "lowcomm/optim/clip.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "lowcomm/error.hpp"

namespace lowcomm {

namespace {

template <class Span>
double norm_of(std::span<const Span> grads) {
  double sum = 0.0;
  for (const auto& g : grads)
    for (const float x : g) sum += static_cast<double>(x) * static_cast<double>(x);
  return std::sqrt(sum);
}

}  // namespace

double global_norm(std::span<const std::span<const float>> grads) { return norm_of(grads); }

double clip_by_global_norm(std::span<const std::span<float>> grads, double max_norm) {
  if (!(max_norm >= 0.0))
    throw Error(fmt::format("clip_by_global_norm: max_norm {} must be >= 0", max_norm));
  const double norm = norm_of(grads);
  if (!std::isfinite(norm) || !(norm > max_norm)) return norm;
  // torch clamps clip_coef to 1; with norm > max_norm it is below 1 already, except within the
  // 1e-6 of the denominator, where the clamp keeps it from exceeding 1.
  const double coef = std::min(1.0, max_norm / (norm + 1e-6));
  const float c = static_cast<float>(coef);
  for (const auto& g : grads)
    for (float& x : g) x *= c;
  return norm;
}

}  // namespace lowcomm
