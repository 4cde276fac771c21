#pragma once
// The Kokkos versions of the compressors' kernels (Backend::Kokkos), written once for any
// Kokkos execution space: Serial, OpenMP or Threads on CPUs, CUDA, HIP or SYCL on GPUs
// (their interface, every backend's: ../backend_kernels.hpp).
//
// Each mirrors the Reference kernel's arithmetic (same sums in the same order) wherever that
// order is part of the definition, so selections, packings and scatters are bitwise the
// Reference's; the DCT, the GEMM and Gram-Schmidt are too on the Serial space (the tests hold
// them to the documented tolerances, which a device's fused multiply-adds may need).
//
// The spans are host memory. In a space that cannot read it, the inputs are copied to the
// device and the outputs back for each call (kokkos_views.hpp); in a host space nothing is
// copied. No header of this one includes Kokkos: only kernels/kokkos/*.cpp do.
#include "../backend_kernels.hpp"

namespace lowcomm::kernels::kokkos_backend {

// Kokkos::initialize on first use (finalized at exit).
void ensure_initialized();

// Whether the default execution space computes on host memory in place (Serial, OpenMP,
// Threads). Where it cannot (CUDA, HIP, SYCL), every call copies its spans to the device and back:
// the optimizers' updates and the elementwise maps here, whose operands are the strategies'
// host-memory state, then run the Cpu loops instead (the same bits).
bool reads_host_memory();

}  // namespace lowcomm::kernels::kokkos_backend
