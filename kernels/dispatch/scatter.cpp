#include "lowcomm/kernels/scatter.hpp"

#include <limits>
#include <string_view>

#include <fmt/format.h>

#include "dispatch.hpp"
#include "lowcomm/error.hpp"
#include "index_checks.hpp"
#include "scatter_checks.hpp"

namespace lowcomm::kernels {

namespace {

constexpr std::string_view kAdd = "scatter_add";
constexpr std::string_view kMean = "scatter_mean";
constexpr std::string_view kMeanPerBlock = "scatter_mean_per_block";
constexpr std::string_view kGather = "gather";
constexpr std::string_view kDivided = "scatter_divided";

void check_arguments(Backend backend, std::string_view kernel, std::span<const std::int64_t> indices,
                     std::span<const float> values, std::span<const float> out) {
  if (indices.size() != values.size()) {
    throw Error(fmt::format("{}: {} indices but {} values", kernel, indices.size(),
                            values.size()));
  }
  const auto size = static_cast<std::int64_t>(out.size());
  const FirstOutside bad = detail::first_outside(backend, kernel, indices, size);
  if (bad.position < indices.size()) {
    throw Error(fmt::format("{}: index {} (at position {}) is outside [0, {}), the size of the span it indexes",
                            kernel, bad.value, bad.position, size));
  }
}

}  // namespace

namespace detail {

void check_block_pairs(Backend backend, std::string_view kernel, std::int64_t block_size, std::int64_t k,
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
    const FirstOutside bad = detail::first_outside(backend, kernel, source.indices, block_size);
    if (bad.position == source.indices.size()) continue;
    throw Error(fmt::format("{}: list {}: index {} (at position {}) is outside [0, {}), the block size", kernel, s,
                            bad.value, bad.position, block_size));
  }
  if (sources.size() * static_cast<std::size_t>(k) > std::numeric_limits<std::uint32_t>::max()) {
    throw Error(fmt::format("{}: {} lists of {} pairs per block; counts are 32-bit", kernel, sources.size(), k));
  }
}

}  // namespace detail

void scatter_add(Backend backend, std::span<const std::int64_t> indices,
                 std::span<const float> values, std::span<float> out) {
  check_arguments(backend, kAdd, indices, values, out);
  LOWCOMM_DISPATCH(backend, scatter_add, indices, values, out);
}

void scatter_mean(Backend backend, std::span<const std::int64_t> indices,
                  std::span<const float> values, std::span<float> out) {
  check_arguments(backend, kMean, indices, values, out);
  if (indices.size() > std::numeric_limits<std::uint32_t>::max()) {
    throw Error(fmt::format("{}: {} pairs in one call; at most 2^32-1 (counts are 32-bit)",
                            kMean, indices.size()));
  }
  LOWCOMM_DISPATCH(backend, scatter_mean, indices, values, out);
}

void scatter_mean_per_block(Backend backend, std::int64_t block_size, std::int64_t k,
                            std::span<const BlockPairs> sources, std::span<float> out) {
  detail::check_block_pairs(backend, kMeanPerBlock, block_size, k, sources, static_cast<std::int64_t>(out.size()));
  LOWCOMM_DISPATCH(backend, scatter_mean_per_block, block_size, k, sources, out);
}

void gather(Backend backend, std::span<const std::int64_t> indices, std::span<const float> source,
            std::span<float> out) {
  check_arguments(backend, kGather, indices, out, source);
  LOWCOMM_DISPATCH(backend, gather, indices, source, out);
}

void scatter_divided(Backend backend, std::span<const std::int64_t> indices, std::span<const float> values,
                     float divisor, std::span<float> out) {
  check_arguments(backend, kDivided, indices, values, out);
  LOWCOMM_DISPATCH(backend, scatter_divided, indices, values, divisor, out);
}

}  // namespace lowcomm::kernels
