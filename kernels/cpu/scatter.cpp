#include "lowcomm/kernels/scatter.hpp"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <memory>
#include <new>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "block_mean.hpp"
#include "lowcomm/error.hpp"
#if LOWCOMM_HAVE_KOKKOS
#include "../kokkos/kokkos_backend.hpp"
#endif
#if LOWCOMM_HAVE_CUDA
#include "../cuda/cuda_backend.hpp"
#endif

namespace lowcomm::kernels {

namespace {

constexpr std::string_view kAdd = "scatter_add";
constexpr std::string_view kMean = "scatter_mean";
constexpr std::string_view kMeanPerBlock = "scatter_mean_per_block";
constexpr std::string_view kGather = "gather";
constexpr std::string_view kDivided = "scatter_divided";

void check_arguments(std::string_view kernel, std::span<const std::int64_t> indices,
                     std::span<const float> values, std::span<const float> out) {
  if (indices.size() != values.size()) {
    throw Error(fmt::format("{}: {} indices but {} values", kernel, indices.size(),
                            values.size()));
  }
  const auto size = static_cast<std::int64_t>(out.size());
  // A branch-free pass that vectorises; the rare failure then looks for the first culprit.
  bool any_bad = false;
  for (const std::int64_t index : indices) any_bad |= index < 0 || index >= size;
  if (!any_bad) return;
  const auto bad = std::find_if(indices.begin(), indices.end(),
                                [&](std::int64_t index) { return index < 0 || index >= size; });
  throw Error(fmt::format("{}: index {} (at position {}) is outside [0, {}), the size of the span it indexes",
                          kernel, *bad, bad - indices.begin(), size));
}

// Pairs applied one after the other, in order. Both backends use this loop: splitting the
// output into per-thread slices (each thread applying, in order, the pairs in its slice) keeps
// the sums bitwise identical, but measured 0.8x of this loop on 2 threads for 1.2M pairs into a
// 50304x768 tensor: the loop is bound by scattered memory writes, and every thread has to read
// every pair.
void add_in_order(std::span<const std::int64_t> indices, std::span<const float> values,
                  std::span<float> out) {
  for (std::size_t p = 0; p < indices.size(); ++p) out[indices[p]] += values[p];
}

void mean_reference(std::span<const std::int64_t> indices, std::span<const float> values,
                    std::span<float> out) {
  std::vector<std::int64_t> count(out.size(), 0);
  std::fill(out.begin(), out.end(), 0.0f);
  for (std::size_t p = 0; p < indices.size(); ++p) {
    out[indices[p]] += values[p];
    ++count[indices[p]];
  }
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (count[i] > 0) out[i] = out[i] / static_cast<float>(count[i]);
  }
}

// The same sums and divisions, but the per-slot counts cost only what the pairs touch: they are
// 32-bit (the caller checked that no count can overflow), come from calloc, whose fresh pages
// the OS zeroes lazily, and are read back by walking the pairs rather than every slot. 2x the
// reference for 1.2M pairs into a 50304x768 tensor, where the count array dominates.
void mean_cpu(std::span<const std::int64_t> indices, std::span<const float> values,
              std::span<float> out) {
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

// The definition: the lists concatenated with absolute indices, through scatter_mean.
void mean_per_block_reference(std::int64_t block_size, std::int64_t k, std::span<const BlockPairs> sources,
                              std::span<float> out) {
  std::vector<std::int64_t> indices;
  std::vector<float> values;
  for (const BlockPairs& source : sources) {
    for (std::size_t p = 0; p < source.indices.size(); ++p) {
      indices.push_back(static_cast<std::int64_t>(p) / k * block_size + source.indices[p]);
      values.push_back(source.values[p]);
    }
  }
  mean_reference(indices, values, out);
}

void mean_per_block_cpu(std::int64_t block_size, std::int64_t k, std::span<const BlockPairs> sources,
                        std::span<float> out) {
  const std::int64_t blocks = static_cast<std::int64_t>(out.size()) / block_size;
#pragma omp parallel if (out.size() >= (std::size_t{1} << 15))
  {
    std::vector<std::uint32_t> count(static_cast<std::size_t>(block_size), 0);
#pragma omp for schedule(static)
    for (std::int64_t b = 0; b < blocks; ++b) {
      detail::mean_of_block(b, block_size, k, sources, out.data() + b * block_size, count.data());
    }
  }
}

}  // namespace

namespace detail {

void check_block_pairs(std::string_view kernel, std::int64_t block_size, std::int64_t k,
                       std::span<const BlockPairs> sources, std::int64_t slots) {
  if (block_size < 1 || k < 1) {
    throw Error(fmt::format("{}: block_size {} and k {} must be >= 1", kernel, block_size, k));
  }
  if (slots % block_size != 0) {
    throw Error(fmt::format("{}: out holds {} floats, not a whole number of blocks of {}", kernel, slots,
                            block_size));
  }
  const auto pairs = static_cast<std::size_t>(slots / block_size * k);
  for (std::size_t s = 0; s < sources.size(); ++s) {
    const BlockPairs& source = sources[s];
    if (source.indices.size() != pairs || source.values.size() != pairs) {
      throw Error(fmt::format("{}: list {} has {} indices and {} values; {} blocks of {} need {}", kernel, s,
                              source.indices.size(), source.values.size(), slots / block_size, k, pairs));
    }
    bool any_bad = false;
    for (const std::int64_t index : source.indices) any_bad |= index < 0 || index >= block_size;
    if (!any_bad) continue;
    const auto bad = std::find_if(source.indices.begin(), source.indices.end(),
                                  [&](std::int64_t index) { return index < 0 || index >= block_size; });
    throw Error(fmt::format("{}: list {}: index {} (at position {}) is outside [0, {}), the block size", kernel, s,
                            *bad, bad - source.indices.begin(), block_size));
  }
  if (sources.size() * static_cast<std::size_t>(k) > std::numeric_limits<std::uint32_t>::max()) {
    throw Error(fmt::format("{}: {} lists of {} pairs per block; counts are 32-bit", kernel, sources.size(), k));
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

}  // namespace detail

void scatter_add(Backend backend, std::span<const std::int64_t> indices,
                 std::span<const float> values, std::span<float> out) {
  check_arguments(kAdd, indices, values, out);
  switch (backend) {
    case Backend::Reference:
    case Backend::Cpu: return add_in_order(indices, values, out);
    case Backend::Kokkos:
#if LOWCOMM_HAVE_KOKKOS
      return kokkos_backend::scatter_add(indices, values, out);
#endif
      break;
    case Backend::Cuda:
#if LOWCOMM_HAVE_CUDA
      return cuda_backend::scatter_add(indices, values, out);
#endif
      break;
  }
  unsupported(kAdd, backend);
}

void scatter_mean(Backend backend, std::span<const std::int64_t> indices,
                  std::span<const float> values, std::span<float> out) {
  check_arguments(kMean, indices, values, out);
  if (indices.size() > std::numeric_limits<std::uint32_t>::max()) {
    throw Error(fmt::format("{}: {} pairs in one call; at most 2^32-1 (counts are 32-bit)",
                            kMean, indices.size()));
  }
  switch (backend) {
    case Backend::Reference: return mean_reference(indices, values, out);
    case Backend::Cpu: return mean_cpu(indices, values, out);
    case Backend::Kokkos:
    case Backend::Cuda: break;
  }
  unsupported(kMean, backend);
}

void scatter_mean_per_block(Backend backend, std::int64_t block_size, std::int64_t k,
                            std::span<const BlockPairs> sources, std::span<float> out) {
  detail::check_block_pairs(kMeanPerBlock, block_size, k, sources, static_cast<std::int64_t>(out.size()));
  switch (backend) {
    case Backend::Reference: return mean_per_block_reference(block_size, k, sources, out);
    case Backend::Cpu: return mean_per_block_cpu(block_size, k, sources, out);
    case Backend::Kokkos:
#if LOWCOMM_HAVE_KOKKOS
      return kokkos_backend::scatter_mean_per_block(block_size, k, sources, out);
#endif
      break;
    case Backend::Cuda:
#if LOWCOMM_HAVE_CUDA
      return cuda_backend::scatter_mean_per_block(block_size, k, sources, out);
#endif
      break;
  }
  unsupported(kMeanPerBlock, backend);
}

void gather(Backend backend, std::span<const std::int64_t> indices, std::span<const float> source,
            std::span<float> out) {
  check_arguments(kGather, indices, out, source);
  switch (backend) {
    case Backend::Reference:
    case Backend::Cpu:
      for (std::size_t p = 0; p < indices.size(); ++p) out[p] = source[static_cast<std::size_t>(indices[p])];
      return;
    case Backend::Kokkos:
#if LOWCOMM_HAVE_KOKKOS
      return kokkos_backend::gather(indices, source, out);
#endif
      break;
    case Backend::Cuda:
#if LOWCOMM_HAVE_CUDA
      return cuda_backend::gather(indices, source, out);
#endif
      break;
  }
  unsupported(kGather, backend);
}

void scatter_divided(Backend backend, std::span<const std::int64_t> indices, std::span<const float> values,
                     float divisor, std::span<float> out) {
  check_arguments(kDivided, indices, values, out);
  switch (backend) {
    case Backend::Reference:
    case Backend::Cpu:
      std::fill(out.begin(), out.end(), 0.0f);
      for (std::size_t p = 0; p < indices.size(); ++p) out[static_cast<std::size_t>(indices[p])] = values[p] / divisor;
      return;
    case Backend::Kokkos:
#if LOWCOMM_HAVE_KOKKOS
      return kokkos_backend::scatter_divided(indices, values, divisor, out);
#endif
      break;
    case Backend::Cuda:
#if LOWCOMM_HAVE_CUDA
      return cuda_backend::scatter_divided(indices, values, divisor, out);
#endif
      break;
  }
  unsupported(kDivided, backend);
}

}  // namespace lowcomm::kernels
