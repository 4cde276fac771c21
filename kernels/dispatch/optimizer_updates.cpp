// The optimizers' updates (include/lowcomm/kernels/optimizer_updates.hpp): the sizes checked
// here, the elements updated by each backend.
#include "lowcomm/kernels/optimizer_updates.hpp"

#include <fmt/format.h>

#include <cstddef>
#include <string_view>

#include "dispatch.hpp"
#include "lowcomm/error.hpp"

namespace lowcomm::kernels {

namespace {

void check_size(std::string_view kernel, std::string_view what, std::size_t size, std::size_t expected) {
  if (size != expected) {
    throw Error(fmt::format("{}: {} holds {} values, expected {}{}", kernel, what, size, expected,
                            expected == 0 ? " (no momentum)" : " (the parameter tensor's size)"));
  }
}

}  // namespace

void adamw_update(Backend backend, const AdamWScalars& s, std::span<float> param, std::span<const float> grad,
                  std::span<float> exp_avg, std::span<float> exp_avg_sq) {
  constexpr std::string_view kernel = "adamw_update";
  check_size(kernel, "the gradient", grad.size(), param.size());
  check_size(kernel, "exp_avg", exp_avg.size(), param.size());
  check_size(kernel, "exp_avg_sq", exp_avg_sq.size(), param.size());
  LOWCOMM_DISPATCH(backend, adamw_update, s, param, grad, exp_avg, exp_avg_sq);
}

void sgd_update(Backend backend, const SgdScalars& s, std::span<float> param, std::span<const float> grad,
                std::span<float> buffer) {
  constexpr std::string_view kernel = "sgd_update";
  check_size(kernel, "the gradient", grad.size(), param.size());
  check_size(kernel, "the momentum buffer", buffer.size(), s.momentum ? param.size() : 0);
  LOWCOMM_DISPATCH(backend, sgd_update, s, param, grad, buffer);
}

void signum_update(Backend backend, const SignumScalars& s, std::span<float> param, std::span<const float> grad,
                   std::span<float> momentum) {
  constexpr std::string_view kernel = "signum_update";
  check_size(kernel, "the gradient", grad.size(), param.size());
  check_size(kernel, "the momentum", momentum.size(), param.size());
  LOWCOMM_DISPATCH(backend, signum_update, s, param, grad, momentum);
}

}  // namespace lowcomm::kernels
