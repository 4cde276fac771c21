// dct_topk.hpp's definition: the two kernels it fuses, one after the other.
#include "../backend_kernels.hpp"
#include "../dct_topk_composed.hpp"

namespace lowcomm::kernels::reference_backend {

void dct_topk_per_block(const BlockLayout& layout, std::span<const float> tensor, std::int64_t kept,
                        std::span<std::int64_t> indices, std::span<float> selected) {
  detail::composed_dct_topk_per_block(kThisBackend, layout, tensor, kept, indices, selected);
}

void scatter_mean_dct_decode(const BlockLayout& layout, std::int64_t k, std::span<const BlockPairs> sources,
                             std::span<float> tensor) {
  detail::composed_scatter_mean_dct_decode(kThisBackend, layout, k, sources, tensor);
}

}  // namespace lowcomm::kernels::reference_backend
