#include "lowcomm/kernels/quantize.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string_view>

#include <fmt/format.h>

#include "../quantize_format.hpp"
#include "correction_checks.hpp"
#include "dispatch.hpp"
#include "lowcomm/error.hpp"

namespace lowcomm::kernels {
namespace {

using detail::Layout;
using detail::SumStep;

void check_bits(std::string_view kernel, int bits) {
  if (bits < 1 || bits > 8) {
    throw Error(fmt::format("{}: bits must be in 1..8, got {}", kernel, bits));
  }
}

Layout check_layout(std::string_view kernel, std::size_t count, std::size_t group, int bits,
                    std::size_t code_bytes, std::size_t scale_count) {
  check_bits(kernel, bits);
  if (group == 0) throw Error(fmt::format("{}: group must be at least 1", kernel));
  const std::size_t want_bytes = quantized_bytes(count, bits);
  if (code_bytes != want_bytes) {
    throw Error(fmt::format("{}: code buffer holds {} bytes, {} elements of {} bits need exactly "
                            "{}", kernel, code_bytes, count, bits, want_bytes));
  }
  const std::size_t groups = detail::group_count(count, group);
  if (scale_count != groups) {
    throw Error(fmt::format("{}: {} scales given, {} elements in groups of {} need exactly {}",
                            kernel, scale_count, count, group, groups));
  }
  return {count, group, groups, bits, (1 << (bits - 1)) - 1};
}

Layout check_encode(std::string_view kernel, std::size_t count, std::size_t group, int bits, Rounding rounding,
                    std::size_t code_bytes, std::size_t scale_count) {
  const Layout layout = check_layout(kernel, count, group, bits, code_bytes, scale_count);
  if (bits == 1 && rounding == Rounding::Stochastic) {
    throw Error(fmt::format("{}: stochastic rounding is not defined for bits = 1 (the code is the sign); use "
                            "Rounding::Nearest",
                            kernel));
  }
  return layout;
}

// Called once the element at `begin`, or one after it, is known to be non-finite.
[[noreturn]] void throw_non_finite(std::span<const float> x, std::size_t begin) {
  const std::size_t i = detail::first_non_finite(x, begin);
  throw Error(fmt::format("quantize: element {} is {}; refusing to encode a non-finite value", i,
                          x[i]));
}

void check_scales(std::span<const float> scales) {
  for (std::size_t g = 0; g < scales.size(); ++g) {
    if (!detail::finite(scales[g]) || scales[g] < 0.0f) {
      throw Error(fmt::format("dequantize: malformed payload: scale {} of group {} is not a "
                              "finite value ≥ 0", scales[g], g));
    }
  }
}

void check_padding(const Layout& layout, std::span<const std::byte> codes) {
  const std::size_t used = (layout.count * layout.bits) % 8;
  if (used == 0) return;
  const auto last = std::to_integer<unsigned>(codes.back());
  if ((last >> used) != 0) {
    throw Error(fmt::format("dequantize: malformed payload: padding bits of the last byte are set "
                            "(byte 0x{:02x}, {} of its bits used)", last, used));
  }
}

[[noreturn]] void throw_bad_code(std::size_t index, unsigned code, const Layout& layout) {
  throw Error(fmt::format("dequantize: malformed payload: code {} of element {} exceeds {} "
                          "(the largest {}-bit code)", code, index, 2 * layout.levels,
                          layout.bits));
}

void dequantize_step(std::string_view kernel, Backend backend, std::span<const std::byte> codes,
                     std::span<const float> scales, std::size_t group, int bits, SumStep step,
                     std::span<float> out) {
  const Layout layout = check_layout(kernel, out.size(), group, bits, codes.size(), scales.size());
  check_scales(scales);
  check_padding(layout, codes);
  if (const std::size_t bad = LOWCOMM_DISPATCH(backend, dequantize, codes, scales, group, bits, layout.levels,
                                               step.sum, step.first, step.divisor, out);
      bad < out.size()) {
    throw_bad_code(bad, detail::read_code_reference(codes, bad, layout.bits), layout);
  }
}

}  // namespace

std::size_t quantized_bytes(std::size_t count, int bits) {
  check_bits("quantized_bytes", bits);
  const auto b = static_cast<std::size_t>(bits);
  if (count > std::numeric_limits<std::size_t>::max() / b) {
    throw Error(fmt::format("quantized_bytes: {} elements of {} bits overflow size_t", count,
                            bits));
  }
  return count / 8 * b + ((count % 8) * b + 7) / 8;
}

void quantize(Backend backend, std::span<const float> x, std::size_t group, int bits,
              Rounding rounding, std::uint64_t seed, std::span<std::byte> codes,
              std::span<float> scales) {
  const Layout layout = check_encode("quantize", x.size(), group, bits, rounding, codes.size(), scales.size());
  if (const std::size_t bad = LOWCOMM_DISPATCH(backend, quantize, x, group, bits, layout.levels,
                                               rounding == Rounding::Stochastic, seed, codes, scales);
      bad < x.size()) {
    throw_non_finite(x, bad);
  }
}

void corrected_quantize(Backend backend, float decay, std::span<const float> residual,
                        std::span<const float> gradient, std::span<float> corrected, std::size_t group,
                        int bits, Rounding rounding, std::uint64_t seed, std::span<std::byte> codes,
                        std::span<float> scales) {
  constexpr std::string_view kernel = "corrected_quantize";
  detail::check_correction(kernel, residual, gradient, corrected);
  const Layout layout = check_encode(kernel, gradient.size(), group, bits, rounding, codes.size(), scales.size());
  if (const std::size_t bad = LOWCOMM_DISPATCH(backend, corrected_quantize, decay, residual, gradient, corrected,
                                               group, bits, layout.levels, rounding == Rounding::Stochastic, seed,
                                               codes, scales);
      bad < corrected.size()) {
    throw_non_finite(corrected, bad);
  }
}

void dequantize(Backend backend, std::span<const std::byte> codes, std::span<const float> scales,
                std::size_t group, int bits, std::span<float> out) {
  dequantize_step("dequantize", backend, codes, scales, group, bits, SumStep{}, out);
}

void dequantize_sum(Backend backend, std::span<const std::byte> codes, std::span<const float> scales,
                    std::size_t group, int bits, bool first, float divisor, std::span<float> sum) {
  if (!(divisor > 0.0f) || !std::isfinite(divisor)) {
    throw Error(fmt::format("dequantize_sum: divisor {} must be a positive finite number", divisor));
  }
  dequantize_step("dequantize_sum", backend, codes, scales, group, bits,
                  SumStep{.sum = true, .first = first, .divisor = divisor}, sum);
}

}  // namespace lowcomm::kernels
