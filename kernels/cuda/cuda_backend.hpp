#pragma once
// The CUDA versions of the compressors' kernels (Backend::Cuda), built when CUDA is enabled
// (LOWCOMM_ENABLE_CUDA, preset `cuda`); their interface is the one kernels/kokkos has too
// (../accelerator_kernels.inc). They mirror the Kokkos kernels' algorithms: data-dependent checks
// as min reductions returning the first offending position, scatters in the Reference's order
// (so bitwise its sums), a radix select for the global top-k, the DCT and the GEMM on cuBLAS.
//
// The spans may point to host or to device memory. Device (and managed) memory is used in place;
// a host span is copied to the device for the call and, for an output, back before the call
// returns (cuda_memory.cuh). Every call waits for its kernels before returning. One device per
// process: local rank modulo visible devices (lowcomm/core/local_rank.hpp), chosen on first use.
// No header of this one includes CUDA's: only kernels/cuda/*.cu do.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "lowcomm/kernels/blocks.hpp"
#include "lowcomm/kernels/scatter.hpp"

namespace lowcomm::kernels::cuda_backend {

// "" when a device is usable; otherwise why not, in words that say what to change (for example
// "no CUDA device is visible to this process (cudaGetDeviceCount: no CUDA-capable device is
// detected); run on a GPU node, or choose compute.backend=cpu"). Never throws.
std::string unavailable_reason();

// "CUDA runtime 13.0, driver 13.0, device 0 of 1: NVIDIA H200 (sm_90, 139.8 GiB), cuBLAS 13.0.0",
// or the unavailable reason.
std::string description();

#include "../accelerator_kernels.inc"

}  // namespace lowcomm::kernels::cuda_backend
