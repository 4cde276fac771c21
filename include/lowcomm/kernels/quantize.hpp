#pragma once
// Low-precision pseudo-gradients (REFERENCE.md §4: "row-wise int8 with one fp32 scale per row"),
// generalised to b = 1..8 bits and any group length.
//
// The elements are split into groups of `group` consecutive elements (a row of a row-major
// matrix, or a block); the last group may be shorter. Each group g has one fp32 scale s_g and
// each element one b-bit code. Codes are bit-packed into one continuous little-endian stream:
// bit j of element i's code is bit (i·b + j) % 8 of byte (i·b + j) / 8, across group boundaries;
// the unused high bits of the last byte are zero.
//
// bits ≥ 2, symmetric uniform: L = 2^(b−1) − 1, s_g = max|x| over the group / L (0 for an
//   all-zero group), q = round(x / s_g) clamped to [−L, L] (q = 0 where s_g = 0), stored as
//   code = q + L ∈ [0, 2L]; decoded x̂ = (code − L) · s_g. A code > 2L is malformed. All
//   arithmetic is in float, x / s_g a true division (not a multiply by a reciprocal).
//   Rounding::Nearest rounds half away from zero (std::round), which unlike nearbyint does not
//   depend on the floating-point environment's rounding mode.
//   Rounding::Stochastic: q = floor(x / s_g + u_i), the sum taken in double, with u_i ∈ [0, 1)
//   the top 24 bits of output i + 1 of a SplitMix64 stream seeded with `seed` (i is the element's
//   index in x), i.e. u_i = (mix64(seed + (i + 1) · 0x9E3779B97F4A7C15) >> 40) · 2^−24. Since
//   |x / s_g| ≤ L the clamp does not bias it: E[q] = x / s_g. The noise depends only on (seed, i),
//   so results do not depend on thread count or on how the work is split.
// bits = 1, signSGD with error-feedback scaling (Karimireddy et al. 2019): s_g = mean |x| over the
//   group, summed in double in index order and rounded to float; code = 1 when x is negative by
//   std::signbit (−0.0 included), decoded x̂ = −s_g for code 1 and +s_g for code 0. The rounding
//   argument has no meaning here: Stochastic throws, Nearest is required.
//
// The Reference and Cpu backends produce bitwise identical codes and scales.
#include <cstddef>
#include <cstdint>
#include <span>

#include "lowcomm/kernels/backend_name.hpp"

namespace lowcomm::kernels {

enum class Rounding { Nearest, Stochastic };

// ceil(count · bits / 8); throws for bits outside 1..8 or when the size does not fit.
std::size_t quantized_bytes(std::size_t count, int bits);

// Encodes x. Requires group ≥ 1, bits in 1..8, codes.size() == quantized_bytes(x.size(), bits)
// and scales.size() == ceil(x.size() / group). A NaN or infinite element throws naming its index
// (a gradient that is already broken must not be sent as a finite-looking payload).
void quantize(Backend backend, std::span<const float> x, std::size_t group, int bits,
              Rounding rounding, std::uint64_t seed, std::span<std::byte> codes,
              std::span<float> scales);

// quantize of corrected = decay·residual + gradient, error feedback's correction, which it writes
// to `corrected` as the scales' pass reads the two (each element rounded as elementwise.hpp's
// scale_add rounds it): the codes and scales of scale_add then quantize, bit for bit, with one
// pass over the tensor fewer (fused_correction.hpp). All three spans have one size; `corrected`
// may be the residual itself, and shares no memory with the gradient. A non-finite corrected
// element throws naming its index, as quantize does; `corrected` is then written in full.
void corrected_quantize(Backend backend, float decay, std::span<const float> residual,
                        std::span<const float> gradient, std::span<float> corrected, std::size_t group,
                        int bits, Rounding rounding, std::uint64_t seed, std::span<std::byte> codes,
                        std::span<float> scales);

// Decodes out.size() elements. Codes and scales come from other ranks and are checked: the sizes
// must match exactly as for quantize, every scale must be finite and ≥ 0, every code ≤ 2L and the
// padding bits zero; otherwise throws naming the offending group or element. When it throws,
// `out` holds unspecified values.
void dequantize(Backend backend, std::span<const std::byte> codes, std::span<const float> scales,
                std::size_t group, int bits, std::span<float> out);

// One rank's step of the decoder's mean over ranks, fused with dequantize: with x̂ the values
// dequantize would write, sum[i] = (first ? 0 + x̂[i] : sum[i] + x̂[i]) / divisor. Called for each
// rank's payload in rank order (first for the first, divisor W for the last and 1 before, which
// divides exactly), it leaves ((0 + x̂_0) + x̂_1 + ...) / W in `sum` without a buffer of decoded
// values. The same checks and errors as dequantize, and a divisor that is not positive and
// finite throws; when it throws, `sum` holds unspecified values.
void dequantize_sum(Backend backend, std::span<const std::byte> codes, std::span<const float> scales,
                    std::size_t group, int bits, bool first, float divisor, std::span<float> sum);

}  // namespace lowcomm::kernels
