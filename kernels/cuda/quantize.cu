// Group-wise b-bit quantisation (quantize.hpp), the Reference's arithmetic: each group's scale by
// one thread in index order, then every byte of the bit-packed code stream by one thread, which
// computes the codes of the elements whose bits fall in it; dequantisation one element per thread.
#include <cmath>

#include "cuda_memory.cuh"
#include "lowcomm/core/splitmix.hpp"

namespace lowcomm::kernels::cuda_backend {

namespace {

constexpr std::uint32_t kLargestFinite = 0x7F7FFFFFu;

// The code of one element (kernels/quantize_format.hpp's encode()).
__device__ unsigned encode(float x, float scale, int bits, int levels, bool stochastic, std::uint64_t seed,
                           std::int64_t index) {
  if (bits == 1) return (bits_of(x) >> 31) != 0 ? 1u : 0u;
  if (scale == 0.0f) return static_cast<unsigned>(levels);
  const float y = x / scale;
  const double limit = levels;
  const double uniform = static_cast<double>(splitmix64_at(seed, static_cast<std::uint64_t>(index)) >> 40) * 0x1.0p-24;
  const double q = stochastic ? floor(static_cast<double>(y) + uniform) : static_cast<double>(roundf(y));
  return static_cast<unsigned>(static_cast<int>(fmax(-limit, fmin(q, limit))) + levels);
}

// Scales: max |x| / L on the bits of |x| (bits >= 2), or mean |x| summed in double in index order
// (bits = 1).
__global__ void scales_kernel(const float* in, std::int64_t count, std::int64_t group, std::int64_t groups, int bits,
                              int levels, float* scales, unsigned long long* first_bad) {
  for (std::int64_t g = first_item(); g < groups; g += item_stride()) {
    const std::int64_t begin = g * group, end = begin + group < count ? begin + group : count;
    std::uint32_t max = 0;
    double sum = 0.0;
    for (std::int64_t i = begin; i < end; ++i) {
      const std::uint32_t magnitude = bits_of(in[i]) & 0x7FFFFFFFu;
      if (magnitude > kLargestFinite) record(first_bad, i);
      max = magnitude > max ? magnitude : max;
      sum += static_cast<double>(float_of(magnitude));
    }
    scales[g] = bits == 1 ? static_cast<float>(sum / static_cast<double>(end - begin))
                          : float_of(max) / static_cast<float>(levels);
  }
}

__global__ void codes_kernel(const float* in, std::int64_t count, std::int64_t group, const float* scales, int bits,
                             int levels, bool stochastic, std::uint64_t seed, std::int64_t bytes,
                             unsigned char* codes) {
  const std::int64_t total_bits = count * bits;
  for (std::int64_t byte = first_item(); byte < bytes; byte += item_stride()) {
    unsigned value = 0;
    std::int64_t element = -1;
    unsigned code = 0;
    const std::int64_t end = total_bits < 8 * byte + 8 ? total_bits : 8 * byte + 8;
    for (std::int64_t bit = 8 * byte; bit < end; ++bit) {
      if (bit / bits != element) {
        element = bit / bits;
        code = encode(in[element], scales[element / group], bits, levels, stochastic, seed, element);
      }
      value |= ((code >> (bit % bits)) & 1u) << (bit - 8 * byte);
    }
    codes[byte] = static_cast<unsigned char>(value);
  }
}

// x̂ = (code - L)·scale, or ±scale for 1 bit; with `sum`, one step of dequantize_sum:
// out = (first ? 0 + x̂ : out + x̂) / divisor, the Reference's two roundings.
__global__ void dequantize_kernel(const unsigned char* codes, const float* scales, std::int64_t count,
                                  std::int64_t group, int bits, int levels, bool sum, bool first, float divisor,
                                  float* out, unsigned long long* first_bad) {
  for (std::int64_t i = first_item(); i < count; i += item_stride()) {
    unsigned code = 0;
    for (int j = 0; j < bits; ++j) {
      const std::int64_t bit = i * bits + j;
      code |= ((static_cast<unsigned>(codes[bit / 8]) >> (bit % 8)) & 1u) << j;
    }
    const float s = scales[i / group];
    if (bits != 1 && code > 2u * static_cast<unsigned>(levels)) record(first_bad, i);
    const float x = bits == 1 ? (code != 0 ? -s : s) : static_cast<float>(static_cast<int>(code) - levels) * s;
    out[i] = sum ? (first ? 0.0f + x : out[i] + x) / divisor : x;
  }
}

}  // namespace

std::size_t quantize(std::span<const float> x, std::size_t group, int bits, int levels, bool stochastic,
                     std::uint64_t seed, std::span<std::byte> codes, std::span<float> scales) {
  const auto count = static_cast<std::int64_t>(x.size());
  const auto g = static_cast<std::int64_t>(group);
  const auto groups = static_cast<std::int64_t>(scales.size());
  const Input<float> in(x);
  Output<float> scale_out(scales);
  FirstPosition first_bad(count);
  launch("quantize (scales)", scales_kernel, groups, in.data(), count, g, groups, bits, levels, scale_out.data(),
         first_bad.device());
  const std::int64_t bad = first_bad.get();
  if (bad < count) {
    scale_out.finish();
    return static_cast<std::size_t>(bad);
  }
  Output<unsigned char> packed(as_uchars(codes));
  const auto bytes = static_cast<std::int64_t>(codes.size());
  launch("quantize (codes)", codes_kernel, bytes, in.data(), count, g, scale_out.data(), bits, levels, stochastic,
         seed, bytes, packed.data());
  scale_out.finish();
  packed.finish();
  return x.size();
}

std::size_t dequantize(std::span<const std::byte> codes, std::span<const float> scales, std::size_t group,
                       int bits, int levels, bool sum, bool first, float divisor, std::span<float> out) {
  const auto count = static_cast<std::int64_t>(out.size());
  const Input<unsigned char> packed(as_uchars(codes));
  const Input<float> scale(scales);
  Output<float> decoded(out, /*initialised=*/sum && !first);
  FirstPosition first_bad(count);
  launch("dequantize", dequantize_kernel, count, packed.data(), scale.data(), count, static_cast<std::int64_t>(group),
         bits, levels, sum, first, divisor, decoded.data(), first_bad.device());
  decoded.finish();
  return static_cast<std::size_t>(first_bad.get());
}

}  // namespace lowcomm::kernels::cuda_backend
