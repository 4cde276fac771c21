#pragma once
// Copying values from one storage to the other on the device (../stored_values.hpp): fp32 to bf16
// rounds to nearest even, bf16 to fp32 widens (exact). Included by kernels/cuda/*.cu only.
#include <cstdint>

#include "../stored_values.hpp"
#include "cuda_memory.cuh"

namespace lowcomm::kernels::cuda_backend {

// out[i] = in[i], converted.
template <class From, class To>
__global__ void convert_values(const From* in, std::int64_t count, To* out) {
  for (std::int64_t i = first_item(); i < count; i += item_stride()) detail::store(out[i], detail::widened(in[i]));
}

}  // namespace lowcomm::kernels::cuda_backend
