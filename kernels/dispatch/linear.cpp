// Fully connected layer (include/lowcomm/kernels/linear.hpp): the shapes checked here, the
// products computed by each backend (the Cpu's on the BLAS, ../cpu/linear.cpp), with `bf16`
// saying whether the products' operands are rounded to bfloat16 (precision.hpp); an input stored
// as bf16 always gives bf16 products.
#include "lowcomm/kernels/linear.hpp"

#include <string_view>
#include <type_traits>

#include "dispatch.hpp"
#include "transformer_checks.hpp"

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

template <class Stored>
constexpr std::string_view unit_of() {
  return std::is_same_v<Stored, std::uint16_t> ? "bf16 values" : "floats";
}

template <class Stored>
void check_forward(std::span<float> out, std::span<const Stored> inp, std::span<const float> weight,
                   std::span<const float> bias, std::int64_t N, std::int64_t IC, std::int64_t OC) {
  check("linear_forward", N, IC, OC, out.size(), inp.size(), weight.size(), bias.size(), "out (N × OC)",
        unit_of<Stored>());
}

template <class Stored>
void check_backward(std::span<float> dinp, std::span<float> dweight, std::span<float> dbias,
                    std::span<const float> dout, std::span<const Stored> inp, std::span<const float> weight,
                    std::int64_t N, std::int64_t IC, std::int64_t OC) {
  constexpr std::string_view kernel = "linear_backward";
  check(kernel, N, IC, OC, dout.size(), inp.size(), weight.size(), dbias.size(), "dout (N × OC)", unit_of<Stored>());
  detail::check_size(kernel, "dweight (OC × IC)", dweight.size(), OC * IC);
  if (!dinp.empty()) detail::check_size(kernel, "dinp (N × IC, or empty)", dinp.size(), N * IC);
}

}  // namespace

void linear_forward(Backend backend, std::span<float> out, std::span<const float> inp,
                    std::span<const float> weight, std::span<const float> bias, std::int64_t N,
                    std::int64_t IC, std::int64_t OC, Precision precision) {
  check_forward(out, inp, weight, bias, N, IC, OC);
  const bool bf16 = precision == Precision::Bf16;
  LOWCOMM_DISPATCH(backend, linear_forward, out, inp, weight, bias, N, IC, OC, bf16);
}

void linear_forward(Backend backend, std::span<float> out, std::span<const std::uint16_t> inp_bf16,
                    std::span<const float> weight, std::span<const float> bias, std::int64_t N,
                    std::int64_t IC, std::int64_t OC) {
  check_forward(out, inp_bf16, weight, bias, N, IC, OC);
  LOWCOMM_DISPATCH(backend, linear_forward, out, inp_bf16, weight, bias, N, IC, OC);
}

void linear_backward(Backend backend, std::span<float> dinp, std::span<float> dweight,
                     std::span<float> dbias, std::span<const float> dout,
                     std::span<const float> inp, std::span<const float> weight, std::int64_t N,
                     std::int64_t IC, std::int64_t OC, Precision precision) {
  check_backward(dinp, dweight, dbias, dout, inp, weight, N, IC, OC);
  const bool bf16 = precision == Precision::Bf16;
  LOWCOMM_DISPATCH(backend, linear_backward, dinp, dweight, dbias, dout, inp, weight, N, IC, OC, bf16);
}

void linear_backward(Backend backend, std::span<float> dinp, std::span<float> dweight,
                     std::span<float> dbias, std::span<const float> dout,
                     std::span<const std::uint16_t> inp_bf16, std::span<const float> weight, std::int64_t N,
                     std::int64_t IC, std::int64_t OC) {
  check_backward(dinp, dweight, dbias, dout, inp_bf16, weight, N, IC, OC);
  LOWCOMM_DISPATCH(backend, linear_backward, dinp, dweight, dbias, dout, inp_bf16, weight, N, IC, OC);
}

}  // namespace lowcomm::kernels
