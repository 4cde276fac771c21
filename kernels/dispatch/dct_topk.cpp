#include "lowcomm/kernels/dct_topk.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>

#include "dispatch.hpp"
#include "lowcomm/error.hpp"
#include "scatter_checks.hpp"

namespace lowcomm::kernels {

namespace {

constexpr std::string_view kEncode = "dct_topk_per_block";
constexpr std::string_view kDecode = "scatter_mean_dct_decode";

void check_tensor(std::string_view kernel, const BlockLayout& layout, std::size_t size) {
  check_block_layout(layout, kernel);
  if (size != static_cast<std::size_t>(layout.size())) {
    throw Error(fmt::format("{}: the layout has {} elements but the tensor span has {}", kernel, layout.size(), size));
  }
}

}  // namespace

void dct_topk_per_block(Backend backend, const BlockLayout& layout, std::span<const float> tensor, std::int64_t k,
                        std::span<std::int64_t> indices, std::span<float> selected) {
  check_tensor(kEncode, layout, tensor.size());
  const std::int64_t block_size = layout.block_size();
  const std::int64_t kept = std::clamp<std::int64_t>(k, 1, block_size);
  const auto entries = static_cast<std::size_t>(layout.blocks() * kept);
  if (indices.size() != entries || selected.size() != entries) {
    throw Error(fmt::format("{}: the output spans must hold exactly {} entries, got {} indices and {} values",
                            kEncode, entries, indices.size(), selected.size()));
  }
  LOWCOMM_DISPATCH(backend, dct_topk_per_block, layout, tensor, kept, indices, selected);
}

void scatter_mean_dct_decode(Backend backend, const BlockLayout& layout, std::int64_t k,
                             std::span<const BlockPairs> sources, std::span<float> tensor) {
  check_tensor(kDecode, layout, tensor.size());
  const std::int64_t block_size = layout.block_size();
  detail::check_block_pairs(backend, kDecode, block_size, k, sources, layout.size());
  LOWCOMM_DISPATCH(backend, scatter_mean_dct_decode, layout, k, sources, tensor);
}

}  // namespace lowcomm::kernels
