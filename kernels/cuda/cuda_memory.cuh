#pragma once
// What every kernel source in kernels/cuda shares besides cuda_runtime.hpp's host side: launch
// geometry, the first-position reduction the data-dependent checks use, float bits. Included by
// kernels/cuda/*.cu only. (No fmt in .cu files: fmt 9's compile-time format strings do not build
// under nvcc; messages are made with std::string or by the host-side .cpp files.)
#include "cuda_runtime.hpp"

namespace lowcomm::kernels::cuda_backend {

// Launch geometry: kThreads per block, at most kMaxBlocks blocks, each kernel a grid-stride loop
// (for (i = first_item(); i < n; i += item_stride())) so any count fits one launch.
constexpr int kThreads = 256;
constexpr std::int64_t kMaxBlocks = 65536;
inline unsigned blocks_for(std::int64_t items) {
  const std::int64_t blocks = (items + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < 1 ? 1 : blocks > kMaxBlocks ? kMaxBlocks : blocks);
}
__device__ inline std::int64_t first_item() {
  return static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ inline std::int64_t item_stride() { return static_cast<std::int64_t>(gridDim.x) * blockDim.x; }

// Queues kernel<<<blocks_for(items), kThreads>>>(args...) on stream() and checks the launch.
template <class... Parameters, class... Arguments>
void launch(const char* name, void (*kernel)(Parameters...), std::int64_t items, Arguments&&... args) {
  if (items <= 0) return;
  kernel<<<blocks_for(items), kThreads, 0, stream()>>>(std::forward<Arguments>(args)...);
  check(cudaGetLastError(), name);
}

// Reports `position` to a FirstPosition (its device() pointer): the smallest reported wins.
__device__ inline void record(unsigned long long* first, std::int64_t position) {
  atomicMin(first, static_cast<unsigned long long>(position));
}

// A float's bits and back, on the device.
__device__ inline std::uint32_t bits_of(float v) { return __float_as_uint(v); }
__device__ inline float float_of(std::uint32_t bits) { return __uint_as_float(bits); }

}  // namespace lowcomm::kernels::cuda_backend
