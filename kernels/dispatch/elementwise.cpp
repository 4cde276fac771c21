// The strategies' elementwise maps (include/lowcomm/kernels/elementwise.hpp): the spans checked
// here, the elements computed by each backend.
#include "lowcomm/kernels/elementwise.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <initializer_list>
#include <string_view>

#include "dispatch.hpp"
#include "lowcomm/error.hpp"

namespace lowcomm::kernels {

namespace {

// Each input has the output's size and is either the output itself or apart from it.
void check_elementwise(std::string_view kernel, std::span<const float> out,
                       std::initializer_list<std::span<const float>> inputs) {
  for (const std::span<const float> in : inputs) {
    if (in.size() != out.size()) {
      throw Error(fmt::format("{}: input has {} elements but output {}", kernel, in.size(), out.size()));
    }
    if (in.data() != out.data() && !detail::apart(in, out)) {
      throw Error(fmt::format("{}: input and output overlap without being the same span", kernel));
    }
  }
}

}  // namespace

void sign(Backend backend, std::span<const float> in, std::span<float> out) {
  check_elementwise("sign", out, {in});
  LOWCOMM_DISPATCH(backend, sign, in, out);
}

void fill(Backend backend, std::span<float> out, float value) {
  LOWCOMM_DISPATCH(backend, fill, out, value);
}

void scale(Backend backend, float alpha, std::span<const float> in, std::span<float> out) {
  check_elementwise("scale", out, {in});
  LOWCOMM_DISPATCH(backend, scale, alpha, in, out);
}

void scale_add(Backend backend, float alpha, std::span<const float> a, std::span<const float> b,
               std::span<float> out) {
  check_elementwise("scale_add", out, {a, b});
  LOWCOMM_DISPATCH(backend, scale_add, alpha, a, b, out);
}

void subtract(Backend backend, std::span<const float> a, std::span<const float> b, std::span<float> out) {
  check_elementwise("subtract", out, {a, b});
  LOWCOMM_DISPATCH(backend, subtract, a, b, out);
}

void subtract_scaled_sign(Backend backend, float alpha, std::span<const float> g, std::span<float> x) {
  check_elementwise("subtract_scaled_sign", x, {g});
  LOWCOMM_DISPATCH(backend, subtract_scaled_sign, alpha, g, x);
}

}  // namespace lowcomm::kernels
