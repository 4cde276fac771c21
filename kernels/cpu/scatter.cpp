// scatter.hpp on the Cpu backend: the Reference's sums and divisions, with cheaper counts.
#include <algorithm>
#include <cstdlib>
#include <memory>
#include <new>
#include <vector>

#include "../backend_kernels.hpp"
#include "block_mean.hpp"

namespace lowcomm::kernels::cpu_backend {

// The same loop as the Reference (see there why it stays one loop in order).
void scatter_add(std::span<const std::int64_t> indices, std::span<const float> values, std::span<float> out) {
  reference_backend::scatter_add(indices, values, out);
}

// The same sums and divisions, but the per-slot counts cost only what the pairs touch: they are
// 32-bit (the caller checked that no count can overflow), come from calloc, whose fresh pages
// the OS zeroes lazily, and are read back by walking the pairs rather than every slot. 2x the
// reference for 1.2M pairs into a 50304x768 tensor, where the count array dominates.
void scatter_mean(std::span<const std::int64_t> indices, std::span<const float> values, std::span<float> out) {
  const std::unique_ptr<std::uint32_t[], decltype(&std::free)> count(
      static_cast<std::uint32_t*>(std::calloc(out.size(), sizeof(std::uint32_t))), &std::free);
  if (!count && !out.empty()) throw std::bad_alloc();
  std::fill(out.begin(), out.end(), 0.0f);
  for (std::size_t p = 0; p < indices.size(); ++p) {
    out[indices[p]] += values[p];
    ++count[indices[p]];
  }
  for (const std::int64_t i : indices) {
    if (count[i] == 0) continue;  // already divided
    out[i] = out[i] / static_cast<float>(count[i]);
    count[i] = 0;
  }
}

void scatter_mean_per_block(std::int64_t block_size, std::int64_t k, std::span<const BlockPairs> sources,
                            std::span<float> out) {
  const std::int64_t blocks = static_cast<std::int64_t>(out.size()) / block_size;
#pragma omp parallel if (out.size() >= (std::size_t{1} << 15))
  {
    std::vector<std::uint32_t> count(static_cast<std::size_t>(block_size), 0);
#pragma omp for schedule(static)
    for (std::int64_t b = 0; b < blocks; ++b) {
      mean_of_block(b, block_size, k, sources, out.data() + b * block_size, count.data());
    }
  }
}

// The block's slots are zeroed and summed into in list order (the order scatter_mean applies
// them in); the counts, one block's worth, are returned to zero by a final walk over the
// block's pairs. No model-sized count array, and the block is written while it is in cache.
void mean_of_block(std::int64_t b, std::int64_t block_size, std::int64_t k, std::span<const BlockPairs> sources,
                   float* slots, std::uint32_t* count) {
  std::fill(slots, slots + block_size, 0.0f);
  for (const BlockPairs& source : sources) {
    const std::int64_t* index = source.indices.data() + b * k;
    const float* value = source.values.data() + b * k;
    for (std::int64_t p = 0; p < k; ++p) {
      slots[index[p]] += value[p];
      ++count[index[p]];
    }
  }
  for (const BlockPairs& source : sources) {
    const std::int64_t* index = source.indices.data() + b * k;
    for (std::int64_t p = 0; p < k; ++p) {
      std::uint32_t& c = count[index[p]];
      if (c == 0) continue;  // already divided
      slots[index[p]] = slots[index[p]] / static_cast<float>(c);
      c = 0;
    }
  }
}

// The same loops as the Reference.
void gather(std::span<const std::int64_t> indices, std::span<const float> source, std::span<float> out) {
  reference_backend::gather(indices, source, out);
}

void scatter_divided(std::span<const std::int64_t> indices, std::span<const float> values, float divisor,
                     std::span<float> out) {
  reference_backend::scatter_divided(indices, values, divisor, out);
}

}  // namespace lowcomm::kernels::cpu_backend
