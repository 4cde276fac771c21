// dct_topk.hpp on the Cpu backend, fused: each chunk of blocks goes from the DCT to the per-block
// selection (or from the per-block means to the inverse DCT) while it is in cache, with exactly
// the bits of the two Cpu kernels run one after the other.
#include <cstdint>
#include <vector>

#include "../backend_kernels.hpp"
#include "block_mean.hpp"
#include "block_topk.hpp"
#include "dct_chunks.hpp"

namespace lowcomm::kernels::cpu_backend {

void dct_topk_per_block(const BlockLayout& layout, std::span<const float> tensor, std::int64_t kept,
                        std::span<std::int64_t> indices, std::span<float> selected) {
  const std::int64_t block_size = layout.block_size();
  dct_encode_chunks(layout, tensor, [&](std::int64_t first, std::int64_t blocks, const float* q) {
    thread_local BlockSelector selector;
    for (std::int64_t b = 0; b < blocks; ++b) {
      const std::size_t out = static_cast<std::size_t>((first + b) * kept);
      selector.select(std::span(q + b * block_size, static_cast<std::size_t>(block_size)), kept,
                      indices.data() + out, selected.data() + out);
    }
  });
}

void scatter_mean_dct_decode(const BlockLayout& layout, std::int64_t k, std::span<const BlockPairs> sources,
                             std::span<float> tensor) {
  const std::int64_t block_size = layout.block_size();
  dct_decode_chunks(
      layout,
      [&](std::int64_t first, std::int64_t blocks, float* q) {
        // All zeros between calls (mean_of_block leaves them so); grown with zeros.
        thread_local std::vector<std::uint32_t> count;
        if (count.size() < static_cast<std::size_t>(block_size)) count.resize(static_cast<std::size_t>(block_size), 0);
        for (std::int64_t b = 0; b < blocks; ++b) {
          mean_of_block(first + b, block_size, k, sources, q + b * block_size, count.data());
        }
      },
      tensor);
}

}  // namespace lowcomm::kernels::cpu_backend
