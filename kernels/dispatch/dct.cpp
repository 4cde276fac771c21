#include "lowcomm/kernels/dct.hpp"

#include <cmath>
#include <cstdint>
#include <numbers>
#include <string_view>

#include <fmt/format.h>

#include "dispatch.hpp"
#include "lowcomm/error.hpp"

namespace lowcomm::kernels {

namespace {

constexpr std::string_view kEncode = "dct_encode_blocks";
constexpr std::string_view kDecode = "dct_decode_blocks";

void check_arguments(std::string_view kernel, const BlockLayout& layout,
                     std::span<const float> input, std::span<const float> output) {
  check_block_layout(layout, kernel);
  const auto size = static_cast<std::size_t>(layout.size());
  if (input.size() != size || output.size() != size) {
    throw Error(fmt::format("{}: the layout has {} elements but the input span has {} and the "
                            "output span {}", kernel, size, input.size(), output.size()));
  }
  if (!detail::apart(input, output)) {
    throw Error(fmt::format("{}: input and output spans overlap; the transform cannot run in "
                            "place", kernel));
  }
}

}  // namespace

std::vector<float> dct_basis(std::int64_t c) {
  std::int64_t elements = 0;
  if (c < 1 || __builtin_mul_overflow(c, c, &elements)) {
    throw Error(fmt::format("dct_basis: length {} must be >= 1 and its square fit in int64", c));
  }
  std::vector<float> basis(static_cast<std::size_t>(elements));
  for (std::int64_t k = 0; k < c; ++k) {
    const double scale = std::sqrt((k == 0 ? 1.0 : 2.0) / static_cast<double>(c));
    for (std::int64_t n = 0; n < c; ++n) {
      const double angle = std::numbers::pi * static_cast<double>(2 * n + 1) *
                           static_cast<double>(k) / (2.0 * static_cast<double>(c));
      basis[k * c + n] = static_cast<float>(scale * std::cos(angle));
    }
  }
  return basis;
}

void dct_encode_blocks(Backend backend, const BlockLayout& layout, std::span<const float> tensor,
                       std::span<float> coefficients) {
  check_arguments(kEncode, layout, tensor, coefficients);
  LOWCOMM_DISPATCH(backend, dct_encode_blocks, layout, tensor, coefficients);
}

void dct_decode_blocks(Backend backend, const BlockLayout& layout,
                       std::span<const float> coefficients, std::span<float> tensor) {
  check_arguments(kDecode, layout, coefficients, tensor);
  LOWCOMM_DISPATCH(backend, dct_decode_blocks, layout, coefficients, tensor);
}

}  // namespace lowcomm::kernels
