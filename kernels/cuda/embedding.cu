// Token + position embedding (embedding.hpp) on the GPU.
//
// Forward: one output element per thread, wte[token, c] + wpe[t, c]: one add, the Reference's
// bits.
//
// Backward: both tables accumulate, and the contract adds each element's contributions in (b, t)
// order; float sums depend on their order, so there are no atomics. Instead every sum belongs to
// one thread, which adds its contributions in that order into the table's value, as the
// Reference's loop does; with --fmad=false the results are therefore the Reference's bit for bit.
//  - dwpe[t, c]: one thread per element of the first T rows, adding dout[b, t, c] for b = 0, 1, …
//    (the positions of offset t come in increasing b). T·C threads, B adds each.
//  - dwte[v, c]: the positions are stably radix-sorted by token (cub), so each token's positions
//    lie side by side in (b, t) order; the thread of (run start, c) then adds the run's rows into
//    dwte[v, c]. The sort costs a few passes over B·T (int32 keys, int64 positions, only the bits
//    a token below V can have); the add is B·T·C threads, each either returning at once or owning
//    one (token, channel) sum: B·T·C adds in all, a run as long as its token is frequent.
#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <span>

#include "cuda_memory.cuh"
#include "cuda_backend.hpp"

namespace lowcomm::kernels::cuda_backend {

namespace {

__global__ void embed(const std::int32_t* tokens, const float* wte, const float* wpe, std::int64_t T,
                      std::int64_t C, std::int64_t count, float* out) {
  for (std::int64_t i = first_item(); i < count; i += item_stride()) {
    const std::int64_t position = i / C, c = i % C;
    out[i] = wte[static_cast<std::int64_t>(tokens[position]) * C + c] + wpe[position % T * C + c];
  }
}

// dwpe[i] += dout[b·T·C + i] for b in order, i = t·C + c over the first T rows.
__global__ void add_position_gradients(const float* dout, std::int64_t B, std::int64_t row_elements,
                                       float* dwpe) {
  for (std::int64_t i = first_item(); i < row_elements; i += item_stride()) {
    float sum = dwpe[i];
    for (std::int64_t b = 0; b < B; ++b) sum += dout[b * row_elements + i];
    dwpe[i] = sum;
  }
}

__global__ void number_positions(std::int64_t positions, std::int64_t* position) {
  for (std::int64_t p = first_item(); p < positions; p += item_stride()) position[p] = p;
}

// Element (p, c) of the sorted positions: the thread whose p starts a token's run adds the run's
// dout rows, in order, into dwte[token, c]; the others have nothing to do.
__global__ void add_token_gradients(const std::uint32_t* token, const std::int64_t* position,
                                    std::int64_t positions, const float* dout, std::int64_t C, float* dwte) {
  const std::int64_t count = positions * C;
  for (std::int64_t i = first_item(); i < count; i += item_stride()) {
    const std::int64_t first = i / C, c = i % C;
    if (first > 0 && token[first - 1] == token[first]) continue;
    float* entry = dwte + static_cast<std::int64_t>(token[first]) * C + c;
    float sum = *entry;
    for (std::int64_t p = first; p < positions && token[p] == token[first]; ++p) sum += dout[position[p] * C + c];
    *entry = sum;
  }
}

}  // namespace

void embedding_forward(std::span<float> out, std::span<const std::int32_t> tokens, std::span<const float> wte,
                       std::span<const float> wpe, std::int64_t B, std::int64_t T, std::int64_t C,
                       std::int64_t /*V: the dispatch checked the tokens against it*/) {
  const std::int64_t count = B * T * C;
  const Input<std::int32_t> token(tokens);
  const Input<float> token_table(wte);
  const Input<float> position_table(wpe);
  Output<float> embedded(out);  // overwritten: a host span is not copied in
  launch("embedding_forward", embed, count, token.data(), token_table.data(), position_table.data(), T, C, count,
         embedded.data());
  embedded.finish();
}

void embedding_backward(std::span<float> dwte, std::span<float> dwpe, std::span<const float> dout,
                        std::span<const std::int32_t> tokens, std::int64_t B, std::int64_t T, std::int64_t C,
                        std::int64_t V) {
  const std::int64_t positions = B * T;
  if (positions == 0 || C == 0) return;  // nothing to add
  const Input<float> gradient(dout);
  const Input<std::int32_t> token(tokens);
  Output<float> token_gradients(dwte, /*initialised=*/true);
  Output<float> position_gradients(dwpe, /*initialised=*/true);

  launch("embedding_backward (wpe)", add_position_gradients, T * C, gradient.data(), B, T * C,
         position_gradients.data());

  // The dispatch checked every token against [0, V), so as unsigned keys they have the same bits
  // and order, and only the bits of the largest possible token (V − 1, at most INT32_MAX) need
  // sorting.
  const auto* keys = reinterpret_cast<const std::uint32_t*>(token.data());
  const auto count = static_cast<std::size_t>(positions);
  const DeviceBuffer<std::int64_t> positions_in_order(count);
  const DeviceBuffer<std::uint32_t> sorted_tokens(count);
  const DeviceBuffer<std::int64_t> sorted_positions(count);
  launch("embedding_backward (positions)", number_positions, positions, positions, positions_in_order.data());
  const auto largest_token = static_cast<std::uint32_t>(std::min<std::int64_t>(V - 1, INT32_MAX));
  const int bits = std::max(1, static_cast<int>(std::bit_width(largest_token)));
  std::size_t scratch_bytes = 0;
  check(cub::DeviceRadixSort::SortPairs(nullptr, scratch_bytes, keys, sorted_tokens.data(),
                                        positions_in_order.data(), sorted_positions.data(), positions, 0, bits,
                                        stream()),
        "cub::DeviceRadixSort::SortPairs (scratch size)");
  // At least one byte: a null scratch pointer would make the second call a size query again.
  const DeviceBuffer<unsigned char> scratch(std::max<std::size_t>(scratch_bytes, 1));
  check(cub::DeviceRadixSort::SortPairs(scratch.data(), scratch_bytes, keys, sorted_tokens.data(),
                                        positions_in_order.data(), sorted_positions.data(), positions, 0, bits,
                                        stream()),
        "cub::DeviceRadixSort::SortPairs");
  launch("embedding_backward (wte)", add_token_gradients, positions * C, sorted_tokens.data(),
         sorted_positions.data(), positions, gradient.data(), C, token_gradients.data());

  token_gradients.finish();
  position_gradients.finish();
}

}  // namespace lowcomm::kernels::cuda_backend
