// What the CUDA backend does not have: the flat scatter_mean (the compressors use
// scatter_mean_per_block), as a stub that says so (../absent.hpp).
#include "../absent.hpp"
#include "cuda_backend.hpp"

namespace lowcomm::kernels::cuda_backend {

LOWCOMM_ABSENT_KERNEL(void, scatter_mean, (std::span<const std::int64_t> indices, std::span<const float> values,
                                           std::span<float> out))

}  // namespace lowcomm::kernels::cuda_backend
