// Token + position embedding (include/lowcomm/kernels/embedding.hpp): the sizes checked here, the
// tokens by the backend where they live (first_outside_int32), the rows computed by each backend.
#include "lowcomm/kernels/embedding.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <string_view>

#include "dispatch.hpp"
#include "index_checks.hpp"
#include "lowcomm/error.hpp"
#include "transformer_checks.hpp"

namespace lowcomm::kernels {
namespace {

void check(Backend backend, std::string_view kernel, std::size_t out, std::span<const std::int32_t> tokens,
           std::size_t wte, std::size_t wpe, std::int64_t B, std::int64_t T, std::int64_t C,
           std::int64_t V) {
  detail::check_dims(kernel, {B, T, C, V});
  const std::int64_t positions = detail::product(kernel, B, T);
  detail::check_size(kernel, "tokens (B·T)", tokens.size(), positions);
  detail::check_size(kernel, "out (B·T × C)", out, detail::product(kernel, positions, C));
  detail::check_size(kernel, "wte (V × C)", wte, detail::product(kernel, V, C));
  if (wpe % static_cast<std::uint64_t>(std::max<std::int64_t>(C, 1)) != 0 ||
      wpe < static_cast<std::uint64_t>(detail::product(kernel, T, C))) {
    throw Error(fmt::format("{}: wpe holds {} floats, expected rows of C = {} and at least T = {} of them",
                            kernel, wpe, C, T));
  }
  if (const FirstOutside bad = detail::first_outside(backend, kernel, tokens, V); bad.position < tokens.size()) {
    const auto i = static_cast<std::int64_t>(bad.position);
    throw Error(fmt::format("{}: token {} at position {} (sequence {}, offset {}) is outside the "
                            "vocabulary [0, {})", kernel, bad.value, i, i / std::max<std::int64_t>(T, 1),
                            i % std::max<std::int64_t>(T, 1), V));
  }
}

}  // namespace

void embedding_forward(Backend backend, std::span<float> out, std::span<const std::int32_t> tokens,
                       std::span<const float> wte, std::span<const float> wpe, std::int64_t B,
                       std::int64_t T, std::int64_t C, std::int64_t V) {
  check(backend, "embedding_forward", out.size(), tokens, wte.size(), wpe.size(), B, T, C, V);
  LOWCOMM_DISPATCH(backend, embedding_forward, out, tokens, wte, wpe, B, T, C, V);
}

void embedding_backward(Backend backend, std::span<float> dwte, std::span<float> dwpe,
                        std::span<const float> dout, std::span<const std::int32_t> tokens,
                        std::int64_t B, std::int64_t T, std::int64_t C, std::int64_t V) {
  check(backend, "embedding_backward", dout.size(), tokens, dwte.size(), dwpe.size(), B, T, C, V);
  LOWCOMM_DISPATCH(backend, embedding_backward, dwte, dwpe, dout, tokens, B, T, C, V);
}

}  // namespace lowcomm::kernels
