// What the Kokkos backend does not have: the reference model's layers and the flat scatter_mean
// (the compressors use scatter_mean_per_block), as stubs that say so (../absent.hpp).
#include "../absent.hpp"
#include "kokkos_backend.hpp"

namespace lowcomm::kernels::kokkos_backend {

LOWCOMM_ABSENT_KERNEL(void, scatter_mean, (std::span<const std::int64_t> indices, std::span<const float> values,
                                           std::span<float> out))

#define LOWCOMM_KERNEL LOWCOMM_ABSENT_KERNEL
#define LOWCOMM_FAMILY LOWCOMM_ABSENT_FAMILY
#include "../interface/embedding.inc"
#include "../interface/layernorm.inc"
#include "../interface/attention.inc"
#include "../interface/gelu.inc"
#include "../interface/residual.inc"
#include "../interface/cross_entropy.inc"
#include "../interface/linear.inc"
#undef LOWCOMM_KERNEL
#undef LOWCOMM_FAMILY

}  // namespace lowcomm::kernels::kokkos_backend
