// Fully connected layer (include/lowcomm/kernels/linear.hpp). Its three products in BLAS terms,
// all row-major (weight is OC × IC as nn.Linear stores it):
//   forward  out   (N × OC)  = inp (N × IC) · weightᵀ          [+ bias broadcast over rows]
//   backward dinp  (N × IC)  = dout (N × OC) · weight
//            dW    (OC × IC) += doutᵀ · inp
// Cpu hands them to the kernels' one matrix product (blas.hpp: OpenBLAS, else Eigen). The bias
// reduction is ours: rows in order, columns split between threads. In bf16 the host backends
// multiply bf16-rounded copies of the operands (exact products, fp32 sums: precision.hpp); an
// input stored as bf16 is widened into the same copies instead.
#include "lowcomm/kernels/linear.hpp"

#include <omp.h>

#include <algorithm>
#include <type_traits>
#include <vector>

#include "blas.hpp"
#include "lowcomm/kernels/float16.hpp"
#include "lowcomm/kernels/linalg.hpp"
#include "transformer_checks.hpp"
#if LOWCOMM_HAVE_CUDA
#include "../cuda/cuda_model_kernels.hpp"
#endif

namespace lowcomm::kernels {
namespace {

void check(std::string_view kernel, std::int64_t N, std::int64_t IC, std::int64_t OC,
           std::size_t out, std::size_t inp, std::size_t weight, std::size_t bias,
           std::string_view out_name, std::string_view inp_unit) {
  detail::check_dims(kernel, {N, IC, OC});
  detail::check_size(kernel, out_name, out, detail::product(kernel, N, OC));
  detail::check_size(kernel, "inp (N × IC)", inp, detail::product(kernel, N, IC), inp_unit);
  detail::check_size(kernel, "weight (OC × IC)", weight, detail::product(kernel, OC, IC));
  if (bias != 0) detail::check_size(kernel, "bias (OC, or empty)", bias, OC);
}

// C ← op(A) · op(B) + beta · C through the kernels' one matrix product (blas.hpp).
void sgemm(bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n, std::int64_t k,
           const float* a, const float* b, float beta, float* c) {
  detail::sgemm(transpose_a, transpose_b, m, n, k, 1.0f, a, b, beta, c);
}

// dbias[c] += Σ_n dout[n, c] for columns [c0, c1), rows in order.
void bias_grad_columns(float* dbias, const float* dout, std::int64_t N, std::int64_t OC,
                       std::int64_t c0, std::int64_t c1) {
  for (std::int64_t n = 0; n < N; ++n) {
    const float* d = dout + n * OC;
#pragma omp simd
    for (std::int64_t c = c0; c < c1; ++c) dbias[c] += d[c];
  }
}

void forward_reference(float* out, const float* inp, const float* weight, const float* bias,
                       std::int64_t N, std::int64_t IC, std::int64_t OC) {
  for (std::int64_t n = 0; n < N; ++n) {
    for (std::int64_t o = 0; o < OC; ++o) {
      float sum = 0.0f;
      for (std::int64_t i = 0; i < IC; ++i) sum += inp[n * IC + i] * weight[o * IC + i];
      out[n * OC + o] = bias != nullptr ? sum + bias[o] : sum;
    }
  }
}

// The two products of the backward pass; the dispatch adds the bias gradient.
void backward_reference(float* dinp, float* dweight, const float* dout, const float* inp,
                        const float* weight, std::int64_t N, std::int64_t IC, std::int64_t OC) {
  if (dinp != nullptr) {
    for (std::int64_t n = 0; n < N; ++n) {
      for (std::int64_t i = 0; i < IC; ++i) {
        float sum = 0.0f;
        for (std::int64_t o = 0; o < OC; ++o) sum += dout[n * OC + o] * weight[o * IC + i];
        dinp[n * IC + i] = sum;
      }
    }
  }
  for (std::int64_t o = 0; o < OC; ++o) {
    for (std::int64_t i = 0; i < IC; ++i) {
      float sum = 0.0f;
      for (std::int64_t n = 0; n < N; ++n) sum += dout[n * OC + o] * inp[n * IC + i];
      dweight[o * IC + i] += sum;
    }
  }
}

// dbias += Σ_rows dout, columns split between the threads.
void bias_grad_cpu(float* dbias, const float* dout, std::int64_t N, std::int64_t OC) {
#pragma omp parallel
  {
    const std::int64_t threads = omp_get_num_threads();
    const std::int64_t id = omp_get_thread_num();
    bias_grad_columns(dbias, dout, N, OC, OC * id / threads, OC * (id + 1) / threads);
  }
}

void forward_cpu(float* out, const float* inp, const float* weight, const float* bias,
                 std::int64_t N, std::int64_t IC, std::int64_t OC) {
  if (N == 0 || OC == 0) return;
  if (bias != nullptr) {
    // Start from the bias and let the product accumulate onto it (beta = 1): no second pass.
#pragma omp parallel for schedule(static)
    for (std::int64_t n = 0; n < N; ++n) std::copy(bias, bias + OC, out + n * OC);
  }
  if (IC == 0) {
    if (bias == nullptr) std::fill(out, out + N * OC, 0.0f);
    return;
  }
  sgemm(false, true, N, OC, IC, inp, weight, bias != nullptr ? 1.0f : 0.0f, out);
}

void backward_cpu(float* dinp, float* dweight, const float* dout, const float* inp, const float* weight,
                  std::int64_t N, std::int64_t IC, std::int64_t OC) {
  if (dinp != nullptr && N > 0 && IC > 0) {
    if (OC == 0) {
      std::fill(dinp, dinp + N * IC, 0.0f);
    } else {
      sgemm(false, false, N, IC, OC, dout, weight, 0.0f, dinp);
    }
  }
  if (OC > 0 && IC > 0 && N > 0) sgemm(true, false, OC, IC, N, dout, inp, 1.0f, dweight);
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

template <class Stored>
constexpr std::string_view unit_of() {
  return std::is_same_v<Stored, std::uint16_t> ? "bf16 values" : "floats";
}

// An input of fp32 values, multiplied as `precision` says, or stored as bf16 bits (always bf16
// products).
template <class Stored>
const float* product_input(std::span<const Stored> inp, Precision precision, int slot, bool threaded) {
  if constexpr (std::is_same_v<Stored, std::uint16_t>) {
    return RoundedOperands::of(inp, slot, threaded);
  } else {
    return precision == Precision::Bf16 ? RoundedOperands::of(inp, slot, threaded) : inp.data();
  }
}

template <class Stored>
void forward(Backend backend, std::span<float> out, std::span<const Stored> inp, std::span<const float> weight,
             std::span<const float> bias, std::int64_t N, std::int64_t IC, std::int64_t OC, Precision precision) {
  check("linear_forward", N, IC, OC, out.size(), inp.size(), weight.size(), bias.size(), "out (N × OC)",
        unit_of<Stored>());
  const float* b = bias.empty() ? nullptr : bias.data();
  const bool bf16 = precision == Precision::Bf16;
  const bool threaded = backend == Backend::Cpu;
  const auto x = [&] { return product_input(inp, precision, 0, threaded); };
  const auto w = [&] { return bf16 ? RoundedOperands::of(weight, 1, threaded) : weight.data(); };
  switch (backend) {
    case Backend::Reference: return forward_reference(out.data(), x(), w(), b, N, IC, OC);
    case Backend::Cpu: return forward_cpu(out.data(), x(), w(), b, N, IC, OC);
    case Backend::Kokkos: break;
    case Backend::Cuda:
#if LOWCOMM_HAVE_CUDA
      if constexpr (std::is_same_v<Stored, std::uint16_t>) {
        return cuda_backend::linear_forward(out, inp, weight, bias, N, IC, OC);
      } else {
        return cuda_backend::linear_forward(out, inp, weight, bias, N, IC, OC, bf16);
      }
#endif
      break;
  }
  unsupported("linear_forward", backend);
}

template <class Stored>
void backward(Backend backend, std::span<float> dinp, std::span<float> dweight, std::span<float> dbias,
              std::span<const float> dout, std::span<const Stored> inp, std::span<const float> weight, std::int64_t N,
              std::int64_t IC, std::int64_t OC, Precision precision) {
  constexpr std::string_view kernel = "linear_backward";
  check(kernel, N, IC, OC, dout.size(), inp.size(), weight.size(), dbias.size(), "dout (N × OC)", unit_of<Stored>());
  detail::check_size(kernel, "dweight (OC × IC)", dweight.size(), OC * IC);
  if (!dinp.empty()) detail::check_size(kernel, "dinp (N × IC, or empty)", dinp.size(), N * IC);
  float* di = dinp.empty() ? nullptr : dinp.data();
  float* db = dbias.empty() ? nullptr : dbias.data();
  const bool bf16 = precision == Precision::Bf16;
  const bool threaded = backend == Backend::Cpu;
  // The bias gradient sums the fp32 dout; only the products take the rounded copies.
  const auto products = [&](auto compute) {
    if (!bf16) return compute(dout.data(), product_input(inp, precision, 1, threaded), weight.data());
    compute(RoundedOperands::of(dout, 0, threaded), product_input(inp, precision, 1, threaded),
            RoundedOperands::of(weight, 2, threaded));
  };
  switch (backend) {
    case Backend::Reference:
      products([&](const float* dy, const float* x, const float* w) {
        backward_reference(di, dweight.data(), dy, x, w, N, IC, OC);
      });
      if (db != nullptr) bias_grad_columns(db, dout.data(), N, OC, 0, OC);
      return;
    case Backend::Cpu:
      products([&](const float* dy, const float* x, const float* w) {
        backward_cpu(di, dweight.data(), dy, x, w, N, IC, OC);
      });
      if (db != nullptr) bias_grad_cpu(db, dout.data(), N, OC);
      return;
    case Backend::Kokkos: break;
    case Backend::Cuda:
#if LOWCOMM_HAVE_CUDA
      if constexpr (std::is_same_v<Stored, std::uint16_t>) {
        return cuda_backend::linear_backward(dinp, dweight, dbias, dout, inp, weight, N, IC, OC);
      } else {
        return cuda_backend::linear_backward(dinp, dweight, dbias, dout, inp, weight, N, IC, OC, bf16);
      }
#endif
      break;
  }
  unsupported(kernel, backend);
}

}  // namespace

void linear_forward(Backend backend, std::span<float> out, std::span<const float> inp,
                    std::span<const float> weight, std::span<const float> bias, std::int64_t N,
                    std::int64_t IC, std::int64_t OC, Precision precision) {
  forward(backend, out, inp, weight, bias, N, IC, OC, precision);
}

void linear_forward(Backend backend, std::span<float> out, std::span<const std::uint16_t> inp_bf16,
                    std::span<const float> weight, std::span<const float> bias, std::int64_t N,
                    std::int64_t IC, std::int64_t OC) {
  forward(backend, out, inp_bf16, weight, bias, N, IC, OC, Precision::Bf16);
}

void linear_backward(Backend backend, std::span<float> dinp, std::span<float> dweight,
                     std::span<float> dbias, std::span<const float> dout,
                     std::span<const float> inp, std::span<const float> weight, std::int64_t N,
                     std::int64_t IC, std::int64_t OC, Precision precision) {
  backward(backend, dinp, dweight, dbias, dout, inp, weight, N, IC, OC, precision);
}

void linear_backward(Backend backend, std::span<float> dinp, std::span<float> dweight,
                     std::span<float> dbias, std::span<const float> dout,
                     std::span<const std::uint16_t> inp_bf16, std::span<const float> weight, std::int64_t N,
                     std::int64_t IC, std::int64_t OC) {
  backward(backend, dinp, dweight, dbias, dout, inp_bf16, weight, N, IC, OC, Precision::Bf16);
}

}  // namespace lowcomm::kernels
