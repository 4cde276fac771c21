// attention.hpp's definition: every query row in order, scalar dot products (../attention_rows.hpp).
#include "../attention_rows.hpp"
#include "../backend_kernels.hpp"

namespace lowcomm::kernels::reference_backend {

namespace {

template <class Stored>
void forward(std::span<float> out, std::span<Stored> att, std::span<const Stored> qkv, std::int64_t B,
             std::int64_t T, std::int64_t C, std::int64_t H) {
  const detail::AttentionShape s = detail::attention_shape(B, T, C, H);
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t h = 0; h < H; ++h)
      for (std::int64_t t = 0; t < T; ++t)
        detail::attention_forward_row<false>(s, out.data(), att.data(), qkv.data(), b, h, t);
}

template <class Stored>
void backward(std::span<float> dqkv, std::span<float> datt, std::span<const float> dout,
              std::span<const Stored> qkv, std::span<const Stored> att, std::int64_t B, std::int64_t T,
              std::int64_t C, std::int64_t H) {
  const detail::AttentionShape s = detail::attention_shape(B, T, C, H);
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t h = 0; h < H; ++h)
      detail::attention_backward_head<false>(s, dqkv.data(), datt.data(), dout.data(), qkv.data(), att.data(), b, h);
}

}  // namespace

void attention_forward(std::span<float> out, std::span<float> att, std::span<const float> qkv, std::int64_t B,
                       std::int64_t T, std::int64_t C, std::int64_t H) {
  forward(out, att, qkv, B, T, C, H);
}

void attention_forward(std::span<float> out, std::span<std::uint16_t> att_bf16,
                       std::span<const std::uint16_t> qkv_bf16, std::int64_t B, std::int64_t T, std::int64_t C,
                       std::int64_t H) {
  forward(out, att_bf16, qkv_bf16, B, T, C, H);
}

void attention_backward(std::span<float> dqkv, std::span<float> datt, std::span<const float> dout,
                        std::span<const float> qkv, std::span<const float> att, std::int64_t B, std::int64_t T,
                        std::int64_t C, std::int64_t H) {
  backward(dqkv, datt, dout, qkv, att, B, T, C, H);
}

void attention_backward(std::span<float> dqkv, std::span<float> datt, std::span<const float> dout,
                        std::span<const std::uint16_t> qkv_bf16, std::span<const std::uint16_t> att_bf16,
                        std::int64_t B, std::int64_t T, std::int64_t C, std::int64_t H) {
  backward(dqkv, datt, dout, qkv_bf16, att_bf16, B, T, C, H);
}

}  // namespace lowcomm::kernels::reference_backend
