// Causal multi-head self-attention (include/lowcomm/kernels/attention.hpp): the shapes checked
// here, the rows computed by each backend (the host's in ../attention_rows.hpp).
#include "lowcomm/kernels/attention.hpp"

#include <string_view>

#include <fmt/format.h>

#include "dispatch.hpp"
#include "lowcomm/error.hpp"
#include "transformer_checks.hpp"

namespace lowcomm::kernels {
namespace {

void check(std::string_view kernel, std::int64_t B, std::int64_t T, std::int64_t C, std::int64_t H,
           std::size_t qkv, std::size_t out, std::size_t att, std::string_view out_name) {
  detail::check_dims(kernel, {B, T, C, H});
  if (H == 0 || C % H != 0) {
    throw Error(fmt::format("{}: width C = {} must be a positive multiple of the heads H = {}",
                            kernel, C, H));
  }
  const std::int64_t rows = detail::product(kernel, B, T);
  detail::check_size(kernel, "qkv (B·T × 3C)", qkv, detail::product(kernel, rows, 3 * C));
  detail::check_size(kernel, out_name, out, detail::product(kernel, rows, C));
  detail::check_size(kernel, "att (B·H·T·T)", att,
                     detail::product(kernel, detail::product(kernel, B, H), detail::product(kernel, T, T)));
}

template <class Stored>
void check_forward(std::span<float> out, std::span<Stored> att, std::span<const Stored> qkv, std::int64_t B,
                   std::int64_t T, std::int64_t C, std::int64_t H) {
  check("attention_forward", B, T, C, H, qkv.size(), out.size(), att.size(), "out (B·T × C)");
}

template <class Stored>
void check_backward(std::span<float> dqkv, std::span<float> datt, std::span<const float> dout,
                    std::span<const Stored> qkv, std::span<const Stored> att, std::int64_t B, std::int64_t T,
                    std::int64_t C, std::int64_t H) {
  constexpr std::string_view kernel = "attention_backward";
  check(kernel, B, T, C, H, qkv.size(), dout.size(), att.size(), "dout (B·T × C)");
  detail::check_size(kernel, "dqkv (B·T × 3C)", dqkv.size(), static_cast<std::int64_t>(qkv.size()));
  detail::check_size(kernel, "datt (B·H·T·T)", datt.size(), static_cast<std::int64_t>(att.size()));
}

}  // namespace

void attention_forward(Backend backend, std::span<float> out, std::span<float> att,
                       std::span<const float> qkv, std::int64_t B, std::int64_t T,
                       std::int64_t C, std::int64_t H) {
  check_forward(out, att, qkv, B, T, C, H);
  LOWCOMM_DISPATCH(backend, attention_forward, out, att, qkv, B, T, C, H);
}

void attention_forward(Backend backend, std::span<float> out, std::span<std::uint16_t> att_bf16,
                       std::span<const std::uint16_t> qkv_bf16, std::int64_t B, std::int64_t T,
                       std::int64_t C, std::int64_t H) {
  check_forward(out, att_bf16, qkv_bf16, B, T, C, H);
  LOWCOMM_DISPATCH(backend, attention_forward, out, att_bf16, qkv_bf16, B, T, C, H);
}

void attention_backward(Backend backend, std::span<float> dqkv, std::span<float> datt,
                        std::span<const float> dout, std::span<const float> qkv,
                        std::span<const float> att, std::int64_t B, std::int64_t T,
                        std::int64_t C, std::int64_t H) {
  check_backward(dqkv, datt, dout, qkv, att, B, T, C, H);
  LOWCOMM_DISPATCH(backend, attention_backward, dqkv, datt, dout, qkv, att, B, T, C, H);
}

void attention_backward(Backend backend, std::span<float> dqkv, std::span<float> datt,
                        std::span<const float> dout, std::span<const std::uint16_t> qkv_bf16,
                        std::span<const std::uint16_t> att_bf16, std::int64_t B, std::int64_t T,
                        std::int64_t C, std::int64_t H) {
  check_backward(dqkv, datt, dout, qkv_bf16, att_bf16, B, T, C, H);
  LOWCOMM_DISPATCH(backend, attention_backward, dqkv, datt, dout, qkv_bf16, att_bf16, B, T, C, H);
}

}  // namespace lowcomm::kernels
