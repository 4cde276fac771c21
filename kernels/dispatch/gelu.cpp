// GELU, tanh approximation (include/lowcomm/kernels/gelu.hpp): the sizes checked here, the
// values computed by each backend.
#include "lowcomm/kernels/gelu.hpp"

#include <cstdint>

#include "dispatch.hpp"
#include "transformer_checks.hpp"

namespace lowcomm::kernels {

namespace {

void check_backward(std::size_t dinp, std::size_t inp, std::size_t dout) {
  const auto n = static_cast<std::int64_t>(dinp);
  detail::check_size("gelu_backward", "inp", inp, n);
  detail::check_size("gelu_backward", "dout", dout, n);
}

}  // namespace

void gelu_forward(Backend backend, std::span<float> out, std::span<const float> inp) {
  detail::check_size("gelu_forward", "inp", inp.size(), static_cast<std::int64_t>(out.size()));
  LOWCOMM_DISPATCH(backend, gelu_forward, out, inp);
}

void gelu_forward(Backend backend, std::span<float> out, std::span<const std::uint16_t> inp_bf16) {
  detail::check_size("gelu_forward", "inp", inp_bf16.size(), static_cast<std::int64_t>(out.size()));
  LOWCOMM_DISPATCH(backend, gelu_forward, out, inp_bf16);
}

void gelu_backward(Backend backend, std::span<float> dinp, std::span<const float> inp,
                   std::span<const float> dout) {
  check_backward(dinp.size(), inp.size(), dout.size());
  LOWCOMM_DISPATCH(backend, gelu_backward, dinp, inp, dout);
}

void gelu_backward(Backend backend, std::span<float> dinp, std::span<const std::uint16_t> inp_bf16,
                   std::span<const float> dout) {
  check_backward(dinp.size(), inp_bf16.size(), dout.size());
  LOWCOMM_DISPATCH(backend, gelu_backward, dinp, inp_bf16, dout);
}

}  // namespace lowcomm::kernels
