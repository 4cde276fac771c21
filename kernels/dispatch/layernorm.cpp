// Layer normalisation (include/lowcomm/kernels/layernorm.hpp): the sizes and eps checked here,
// the rows computed by each backend.
#include "lowcomm/kernels/layernorm.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <string_view>

#include "dispatch.hpp"
#include "lowcomm/error.hpp"
#include "transformer_checks.hpp"

namespace lowcomm::kernels {
namespace {

void check_common(std::string_view kernel, std::int64_t N, std::int64_t C, std::size_t weight,
                  std::size_t bias, std::size_t mean, std::size_t rstd) {
  detail::check_dims(kernel, {N, C});
  detail::check_size(kernel, "weight (C)", weight, C);
  detail::check_size(kernel, "bias (C)", bias, C);
  detail::check_size(kernel, "mean (N)", mean, N);
  detail::check_size(kernel, "rstd (N)", rstd, N);
}

}  // namespace

void layernorm_forward(Backend backend, std::span<float> out, std::span<float> mean,
                       std::span<float> rstd, std::span<const float> inp,
                       std::span<const float> weight, std::span<const float> bias, std::int64_t N,
                       std::int64_t C, float eps) {
  constexpr std::string_view kernel = "layernorm_forward";
  check_common(kernel, N, C, weight.size(), bias.size(), mean.size(), rstd.size());
  const std::int64_t size = detail::product(kernel, N, C);
  detail::check_size(kernel, "inp (N × C)", inp.size(), size);
  detail::check_size(kernel, "out (N × C)", out.size(), size);
  if (!(eps > 0.0f) || !std::isfinite(eps)) {
    throw Error(fmt::format("{}: eps must be finite and > 0, got {}", kernel, eps));
  }
  LOWCOMM_DISPATCH(backend, layernorm_forward, out, mean, rstd, inp, weight, bias, N, C, eps);
}

void layernorm_backward(Backend backend, std::span<float> dinp, std::span<float> dweight,
                        std::span<float> dbias, std::span<const float> dout,
                        std::span<const float> inp, std::span<const float> weight,
                        std::span<const float> mean, std::span<const float> rstd, std::int64_t N,
                        std::int64_t C) {
  constexpr std::string_view kernel = "layernorm_backward";
  check_common(kernel, N, C, weight.size(), dbias.size(), mean.size(), rstd.size());
  detail::check_size(kernel, "dweight (C)", dweight.size(), C);
  const std::int64_t size = detail::product(kernel, N, C);
  detail::check_size(kernel, "dinp (N × C)", dinp.size(), size);
  detail::check_size(kernel, "dout (N × C)", dout.size(), size);
  detail::check_size(kernel, "inp (N × C)", inp.size(), size);
  LOWCOMM_DISPATCH(backend, layernorm_backward, dinp, dweight, dbias, dout, inp, weight, mean, rstd, N, C);
}

}  // namespace lowcomm::kernels
