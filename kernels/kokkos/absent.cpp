// What the Kokkos backend does not have: the reference model's layers, the flat scatter_mean (the
// compressors use scatter_mean_per_block), PowerSGD's fused feedback product and top-k's and
// quantize's fused correction, as stubs that say so (../absent.hpp).
#include "../absent.hpp"
#include "kokkos_backend.hpp"

namespace lowcomm::kernels::kokkos_backend {

LOWCOMM_ABSENT_KERNEL(void, scatter_mean, (std::span<const std::int64_t> indices, std::span<const float> values,
                                           std::span<float> out))
// PowerSGD runs the unfused sequence here (gemm, subtract, scale_add, gemm: linalg.hpp).
LOWCOMM_ABSENT_KERNEL(void, feedback_product, (std::int64_t rows, std::int64_t cols, std::int64_t last_rank,
                                               std::span<const float> last_p, std::span<const float> last_q,
                                               float decay, std::span<const float> gradient,
                                               std::span<float> corrected, std::int64_t rank,
                                               std::span<const float> q, std::span<float> p))
// Top-k runs the sequence here (scale_add, then topk_global: topk.hpp).
LOWCOMM_ABSENT_KERNEL(void, corrected_topk_global, (float decay, std::span<const float> residual,
                                                    std::span<const float> gradient, std::span<float> corrected,
                                                    std::int64_t kept, std::span<std::int64_t> indices,
                                                    std::span<float> selected))
// Quantize with error feedback runs the sequence here (scale_add, then quantize: quantize.hpp).
LOWCOMM_ABSENT_KERNEL(std::size_t, corrected_quantize, (float decay, std::span<const float> residual,
                                                        std::span<const float> gradient, std::span<float> corrected,
                                                        std::size_t group, int bits, int levels, bool stochastic,
                                                        std::uint64_t seed, std::span<std::byte> codes,
                                                        std::span<float> scales))

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
