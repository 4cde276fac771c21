// b-bit quantisation with one scale per group (quantize.hpp documents the scheme): each group's
// scale, then the code stream set one bit at a time. The per-element arithmetic is the Cpu
// backend's too (../quantize_format.hpp).
#include <algorithm>

#include "../backend_kernels.hpp"
#include "../elementwise_rules.hpp"
#include "../quantize_format.hpp"

namespace lowcomm::kernels::reference_backend {

using detail::Layout;

std::size_t quantize(std::span<const float> x, std::size_t group, int bits, int levels, bool stochastic,
                     std::uint64_t seed, std::span<std::byte> codes, std::span<float> scales) {
  const Layout layout = detail::layout_of(x.size(), group, bits, levels);
  const Rounding rounding = stochastic ? Rounding::Stochastic : Rounding::Nearest;
  for (std::size_t g = 0; g < layout.groups; ++g) {
    const std::size_t begin = g * layout.group;
    const std::size_t len = std::min(layout.group, layout.count - begin);
    bool bad = false;
    scales[g] = detail::scale_of(layout, &x[begin], len, bad);
    if (bad) return detail::first_non_finite(x, begin);
  }
  std::fill(codes.begin(), codes.end(), std::byte{0});
  for (std::size_t i = 0; i < layout.count; ++i) {
    const unsigned code = detail::encode(x[i], scales[i / layout.group], layout, rounding, seed, i);
    for (int j = 0; j < layout.bits; ++j) {
      const std::size_t bit = i * layout.bits + j;
      if ((code >> j) & 1u) codes[bit / 8] |= static_cast<std::byte>(1u << (bit % 8));
    }
  }
  return x.size();
}

// The definition: the correction in a pass of its own (scale_add's element), then quantize.
std::size_t corrected_quantize(float decay, std::span<const float> residual, std::span<const float> gradient,
                               std::span<float> corrected, std::size_t group, int bits, int levels, bool stochastic,
                               std::uint64_t seed, std::span<std::byte> codes, std::span<float> scales) {
  for (std::size_t i = 0; i < corrected.size(); ++i) corrected[i] = scaled_sum(decay, residual[i], gradient[i]);
  return quantize(corrected, group, bits, levels, stochastic, seed, codes, scales);
}

std::size_t dequantize(std::span<const std::byte> codes, std::span<const float> scales, std::size_t group,
                       int bits, int levels, bool sum, bool first, float divisor, std::span<float> out) {
  const Layout layout = detail::layout_of(out.size(), group, bits, levels);
  const detail::SumStep step{.sum = sum, .first = first, .divisor = divisor};
  for (std::size_t i = 0; i < layout.count; ++i) {
    const unsigned code = detail::read_code_reference(codes, i, layout.bits);
    if (!detail::valid_code(code, layout)) return i;
    out[i] = step.apply(out[i], detail::decode(code, scales[i / layout.group], layout));
  }
  return out.size();
}

}  // namespace lowcomm::kernels::reference_backend
