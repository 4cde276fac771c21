#pragma once
// The CUDA versions of the compressors' kernels, the elementwise maps and the optimizers' updates
// (Backend::Cuda), built when CUDA is enabled
// (LOWCOMM_ENABLE_CUDA, preset `cuda`); their interface is the one kernels/kokkos has too
// (../accelerator_kernels.inc). They mirror the Kokkos kernels' algorithms: data-dependent checks
// as min reductions returning the first offending position, scatters in the Reference's order
// (so bitwise its sums), a radix select for the global top-k, the DCT and the GEMM on cuBLAS.
//
// The spans these functions take may point to host or to device memory. Device (and managed)
// memory is used in place; a host span is copied to the device for the call and, for an output,
// back before the call returns (cuda_runtime.hpp). (The public kernels' dispatch in kernels/cpu
// still reads some of its inputs on the host for its checks, so through lowcomm::kernels only
// top-k, the fp16/bf16 conversions, sign packing, the elementwise maps and the optimizers' updates
// take plain device spans today; managed memory works everywhere.) Every call waits
// for its kernels before returning. One device per process: local rank modulo visible devices
// (lowcomm/core/local_rank.hpp), chosen on first use.
// No header of this one includes CUDA's: only kernels/cuda/*.cu do.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "lowcomm/kernels/blocks.hpp"
#include "lowcomm/kernels/optimizer_updates.hpp"
#include "lowcomm/kernels/scatter.hpp"

namespace lowcomm::kernels::cuda_backend {

// "" when a device is usable (this process's device was found and took a context); otherwise why
// not, in words that say what to change (for example "no usable CUDA device for this process
// (cudaGetDeviceCount: no CUDA-capable device is detected); run on a GPU node ..."). Never throws.
std::string unavailable_reason();

// "CUDA runtime 13.0, driver 13.0, device 1 of 4 (local rank 1 from SLURM_LOCALID): NVIDIA H200
// (sm_90, 139.8 GiB), matrix products cuBLAS 13.0.0", or the unavailable reason.
std::string description();

#include "../accelerator_kernels.inc"

// kernels::BackendBuffer's memory on Backend::Cuda: managed (cudaMallocManaged), so host code can
// read it too, zeroed on the device. allocate_managed throws lowcomm::Error when the device cannot
// give it; free_managed never throws.
void* allocate_managed(std::size_t bytes);
void free_managed(void* memory) noexcept;

// GB/s (read + write) of cudaMemcpyAsync device to device of `bytes`, best of five: the device
// memory's bandwidth that the benchmarks give their rates as a fraction of.
double copy_bandwidth(std::size_t bytes);

}  // namespace lowcomm::kernels::cuda_backend
