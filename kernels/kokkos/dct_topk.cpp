// dct_topk.hpp on Kokkos: the two kernels it fuses, one after the other on Kokkos (the DCT then the
// top-k; the scatter-mean then the inverse DCT), the coefficients in between in its scratch memory.
#include "../backend_kernels.hpp"
#include "../dct_topk_composed.hpp"

namespace lowcomm::kernels::kokkos_backend {

void dct_topk_per_block(const BlockLayout& layout, std::span<const float> tensor, std::int64_t kept,
                        std::span<std::int64_t> indices, std::span<float> selected) {
  detail::composed_dct_topk_per_block(kThisBackend, layout, tensor, kept, indices, selected);
}

void scatter_mean_dct_decode(const BlockLayout& layout, std::int64_t k, std::span<const BlockPairs> sources,
                             std::span<float> tensor) {
  detail::composed_scatter_mean_dct_decode(kThisBackend, layout, k, sources, tensor);
}

}  // namespace lowcomm::kernels::kokkos_backend
