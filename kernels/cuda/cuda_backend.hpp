#pragma once
// The CUDA versions of every kernel (Backend::Cuda): the compressors', the elementwise maps, the
// optimizers' updates and the reference model's layers, built when CUDA is enabled
// (LOWCOMM_ENABLE_CUDA, preset `cuda`); their interface is every backend's
// (../backend_kernels.hpp). They mirror the Kokkos kernels' algorithms: data-dependent checks
// as min reductions returning the first offending position, scatters in the Reference's order
// (so bitwise its sums), a radix select for the global top-k, the DCT and the GEMM on cuBLAS.
//
// The spans these functions take may point to host or to device memory. Device (and managed)
// memory is used in place; a host span is copied to the device for the call and, for an output,
// back before the call returns (cuda_runtime.hpp). The data-dependent checks run here too
// (index_checks.cu); only a received payload's scales and padding bits are read on the host by
// the dispatch, so dequantize and unpack_signs need managed or host memory (docs/backends.md).
// `allocate` gives managed memory (cudaMallocManaged), zeroed on the device, so host code can
// read it too. Every call waits
// for its kernels before returning. One device per process: local rank modulo visible devices
// (the app says it: place_on_node in lowcomm/kernels/backend.hpp), chosen on first use.
//
// The model's kernels match the Reference within float rounding, not bitwise: reductions run in
// parallel, in a fixed order, so the same bits run to run. For finite inputs: attention's
// products run over the whole T × T square with the masked weights 0, so an infinite value at a
// masked position (0 · inf) gives NaN where the Reference, which skips those terms, stays finite.
// No header of this one includes CUDA's: only kernels/cuda/*.cu do.
#include "../backend_kernels.hpp"
