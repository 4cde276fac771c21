// Softmax cross-entropy (include/lowcomm/kernels/cross_entropy.hpp): the sizes checked here, the
// targets by the backend where they live (first_outside_int32), the rows computed by each backend (the host's in ../cross_entropy_rows.hpp).
#include "lowcomm/kernels/cross_entropy.hpp"

#include <cmath>
#include <string_view>

#include <fmt/format.h>

#include "dispatch.hpp"
#include "index_checks.hpp"
#include "lowcomm/error.hpp"
#include "transformer_checks.hpp"

namespace lowcomm::kernels {
namespace {

void check(Backend backend, std::string_view kernel, std::size_t logits, std::span<const std::int32_t> targets,
           std::size_t losses, std::int64_t N, std::int64_t V) {
  detail::check_dims(kernel, {N, V});
  detail::check_size(kernel, "logits (N × V)", logits, detail::product(kernel, N, V));
  detail::check_size(kernel, "losses (N)", losses, N);
  if (targets.size() != static_cast<std::uint64_t>(N)) {
    throw Error(fmt::format("{}: targets holds {} values, expected N = {}", kernel, targets.size(), N));
  }
  if (const FirstOutside bad = detail::first_outside(backend, kernel, targets, V);
      bad.position < targets.size()) {
    throw Error(fmt::format("{}: target {} at row {} is outside the vocabulary [0, {})", kernel, bad.value,
                            bad.position, V));
  }
}

}  // namespace

void cross_entropy_forward(Backend backend, std::span<float> losses, std::span<const float> logits,
                           std::span<const std::int32_t> targets, std::int64_t N, std::int64_t V) {
  check(backend, "cross_entropy_forward", logits.size(), targets, losses.size(), N, V);
  LOWCOMM_DISPATCH(backend, cross_entropy_forward, losses, logits, targets, N, V);
}

void cross_entropy_forward_backward(Backend backend, std::span<float> losses,
                                    std::span<float> dlogits, std::span<const float> logits,
                                    std::span<const std::int32_t> targets, std::int64_t N,
                                    std::int64_t V, float scale) {
  constexpr std::string_view kernel = "cross_entropy_forward_backward";
  check(backend, kernel, logits.size(), targets, losses.size(), N, V);
  detail::check_size(kernel, "dlogits (N × V)", dlogits.size(), N * V);
  if (!std::isfinite(scale)) throw Error(fmt::format("{}: scale must be finite, got {}", kernel, scale));
  LOWCOMM_DISPATCH(backend, cross_entropy_forward_backward, losses, dlogits, logits, targets, N, V, scale);
}

}  // namespace lowcomm::kernels
