#include "lowcomm/kernels/dct_topk.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>
#include <vector>

#include "../backend_scratch.hpp"
#include "block_mean.hpp"
#include "block_topk.hpp"
#include "dct_chunks.hpp"
#include "lowcomm/error.hpp"
#include "lowcomm/kernels/dct.hpp"
#include "lowcomm/kernels/topk.hpp"

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
  switch (backend) {
    case Backend::Reference:
    case Backend::Kokkos:
    case Backend::Cuda: {  // the two kernels one after the other
      const std::span<float> coefficients = detail::backend_scratch(backend, tensor.size());
      dct_encode_blocks(backend, layout, tensor, coefficients);
      return topk_per_block(backend, coefficients, block_size, kept, indices, selected);
    }
    case Backend::Cpu:
      return detail::dct_encode_chunks(layout, tensor, [&](std::int64_t first, std::int64_t blocks, const float* q) {
        thread_local cpu_backend::BlockSelector selector;
        for (std::int64_t b = 0; b < blocks; ++b) {
          const std::size_t out = static_cast<std::size_t>((first + b) * kept);
          selector.select(std::span(q + b * block_size, static_cast<std::size_t>(block_size)), kept,
                          indices.data() + out, selected.data() + out);
        }
      });
  }
  unsupported(kEncode, backend);
}

void scatter_mean_dct_decode(Backend backend, const BlockLayout& layout, std::int64_t k,
                             std::span<const BlockPairs> sources, std::span<float> tensor) {
  check_tensor(kDecode, layout, tensor.size());
  const std::int64_t block_size = layout.block_size();
  detail::check_block_pairs(kDecode, block_size, k, sources, layout.size());
  switch (backend) {
    case Backend::Reference:
    case Backend::Kokkos:
    case Backend::Cuda: {
      const std::span<float> coefficients = detail::backend_scratch(backend, tensor.size());
      scatter_mean_per_block(backend, block_size, k, sources, coefficients);
      return dct_decode_blocks(backend, layout, coefficients, tensor);
    }
    case Backend::Cpu:
      return detail::dct_decode_chunks(
          layout,
          [&](std::int64_t first, std::int64_t blocks, float* q) {
            // All zeros between calls (mean_of_block leaves them so); grown with zeros.
            thread_local std::vector<std::uint32_t> count;
            if (count.size() < static_cast<std::size_t>(block_size)) count.resize(static_cast<std::size_t>(block_size), 0);
            for (std::int64_t b = 0; b < blocks; ++b) {
              detail::mean_of_block(first + b, block_size, k, sources, q + b * block_size, count.data());
            }
          },
          tensor);
  }
  unsupported(kDecode, backend);
}

}  // namespace lowcomm::kernels
