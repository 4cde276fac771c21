#pragma once
// linear.hpp's operands on the host, shared by the Reference and the Cpu backend. In bf16 the host
// backends multiply bf16-rounded copies of the operands (exact products, fp32 sums: precision.hpp);
// an input stored as bf16 is widened into the same copies instead. The bias gradient is a sum of
// rows in order, the Cpu backend's columns split between threads.
#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

#include "lowcomm/kernels/float16.hpp"

namespace lowcomm::kernels::detail {

// dbias[c] += Σ_n dout[n, c] for columns [c0, c1), rows in order.
inline void linear_bias_grad_columns(float* dbias, const float* dout, std::int64_t N, std::int64_t OC,
                                     std::int64_t c0, std::int64_t c1) {
  for (std::int64_t n = 0; n < N; ++n) {
    const float* d = dout + n * OC;
#pragma omp simd
    for (std::int64_t c = c0; c < c1; ++c) dbias[c] += d[c];
  }
}

// The operands of a bf16 product on the host: copies rounded to bfloat16 (and held as the fp32
// values they are), kept per thread between calls so that a training step allocates nothing after
// its first.
class RoundedOperands {
 public:
  // `values` rounded to bf16, in this thread's slot `slot` (0, 1 or 2: one per operand).
  static const float* of(std::span<const float> values, int slot, bool parallel) {
    return converted(values, slot, parallel, [](float v) { return bf16_to_float(float_to_bf16(v)); });
  }
  // bf16 values widened to fp32 (exact), in the same slots.
  static const float* of(std::span<const std::uint16_t> bits, int slot, bool parallel) {
    return converted(bits, slot, parallel, [](std::uint16_t b) { return bf16_to_float(b); });
  }

 private:
  template <class Value, class Convert>
  static const float* converted(std::span<const Value> values, int slot, bool parallel, Convert convert) {
    std::vector<float>& copy = slots()[slot];
    if (copy.size() < values.size()) copy.resize(values.size());
    const auto n = static_cast<std::int64_t>(values.size());
    const Value* in = values.data();
    float* out = copy.data();
#pragma omp parallel for simd schedule(static) if (parallel && n > (std::int64_t{1} << 15))
    for (std::int64_t i = 0; i < n; ++i) out[i] = convert(in[i]);
    return out;
  }

  static std::vector<float>* slots() {
    thread_local std::vector<float> copies[3];
    return copies;
  }
};

// An input of fp32 values, multiplied in bf16 when `bf16` says so, or stored as bf16 bits (always
// bf16 products).
template <class Stored>
const float* linear_product_input(std::span<const Stored> inp, bool bf16, int slot, bool threaded) {
  if constexpr (std::is_same_v<Stored, std::uint16_t>) {
    return RoundedOperands::of(inp, slot, threaded);
  } else {
    return bf16 ? RoundedOperands::of(inp, slot, threaded) : inp.data();
  }
}

// compute(x, w) on the forward product's operands (rounded copies converted on `threaded` threads).
template <class Stored, class Compute>
void with_linear_forward_operands(std::span<const Stored> inp, std::span<const float> weight, bool bf16,
                                  bool threaded, Compute compute) {
  const auto x = [&] { return linear_product_input(inp, bf16, 0, threaded); };
  const auto w = [&] { return bf16 ? RoundedOperands::of(weight, 1, threaded) : weight.data(); };
  compute(x(), w());
}

// compute(dy, x, w) on the backward products' operands. The bias gradient sums the fp32 dout;
// only the products take the rounded copies.
template <class Stored, class Compute>
void with_linear_backward_operands(std::span<const float> dout, std::span<const Stored> inp,
                                   std::span<const float> weight, bool bf16, bool threaded, Compute compute) {
  if (!bf16) return compute(dout.data(), linear_product_input(inp, bf16, 1, threaded), weight.data());
  compute(RoundedOperands::of(dout, 0, threaded), linear_product_input(inp, bf16, 1, threaded),
          RoundedOperands::of(weight, 2, threaded));
}

}  // namespace lowcomm::kernels::detail
