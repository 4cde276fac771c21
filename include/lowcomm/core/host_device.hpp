#pragma once
// Marks the small inline functions that device kernels call as well as host code (the fp16
// conversions, SplitMix64's mix, used by kernels/kokkos on a CUDA or HIP Kokkos): __host__
// __device__ under nvcc or hipcc, nothing for a host compiler.
#if defined(__CUDACC__) || defined(__HIPCC__)
#define LOWCOMM_HOST_DEVICE __host__ __device__
#else
#define LOWCOMM_HOST_DEVICE
#endif
