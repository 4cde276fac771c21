#pragma once
// Every kernel is declared once, with a Backend argument, and implemented per backend beside it:
// the plain reference (the ground truth tests compare against), the optimised CPU version
// (OpenMP, vectorisable loops, the BLAS), and the compressors' kernels on the accelerator
// backends: portable Kokkos (builds with LOWCOMM_ENABLE_KOKKOS=ON) and CUDA (builds with CUDA
// enabled, preset `cuda`). A backend a kernel does not have, or that this build lacks, throws
// lowcomm::Error naming the kernel and the backend.
// The Backend enum and its names are backend_name.hpp's.
#include <optional>
#include <string>
#include <string_view>

#include "lowcomm/core/local_rank.hpp"
#include "lowcomm/kernels/backend_name.hpp"

namespace lowcomm::kernels {

// The BLAS behind every Cpu matrix product in this build: OpenBLAS's configuration string,
// "CBLAS <libraries>" (LOWCOMM_BLAS=FindBLAS), or "Eigen" (for `lowcomm info` and the
// benchmarks' headers).
std::string cpu_matrix_products();

// Which of its node's GPUs this process computes on with Backend::Cuda: its rank among the
// node's processes, modulo the devices it sees (device 0 without one). The app decides it, since
// it knows how it was launched (core/local_rank.hpp reads the launchers' variables), and says it
// before the backend is first used; a process that never says takes device 0. Throws
// lowcomm::Error when the backend already computes on another device.
void place_on_node(const std::optional<LocalRank>& local_rank);

// Where Backend::Kokkos computes, e.g. "Kokkos 3.4.1, execution space Serial, matrix products
// KokkosBlas::gemm", or "" in a build without it. Starts Kokkos if it has not started yet.
std::string kokkos_description();

// Where Backend::Cuda computes, e.g. "CUDA runtime 13.0, driver 13.0, device 0 of 4 (local rank 0
// from SLURM_LOCALID, place_on_node): NVIDIA H200 (sm_90, 139.8 GiB), matrix products cuBLAS 13.0.0", or why no
// device is usable; "" in a build without CUDA.
std::string cuda_description();

// "" when `backend` can compute in this process; otherwise why not, in words that say what to
// change (not in this build, or no CUDA device visible).
std::string unavailable_reason(Backend backend);

// Whether this build has `backend`'s kernels: Reference and Cpu always, Kokkos and Cuda where the
// build enabled them (otherwise every one of their kernels is a stub saying how to build it).
bool in_this_build(Backend backend);

// Whether `backend` has the kernel or the kernel family `name` (a family is the name of its
// header: "topk", "attention", ...), in this build: false where its version is a stub that throws
// "<kernel> has no <backend> implementation". A CUDA build answers true for Cuda without a device
// (unavailable_reason says why it cannot run).
bool implements(Backend backend, std::string_view name);

// Whether the transformer's kernels (the reference model's layers) exist on this backend:
// Reference and Cpu, and Cuda in a build with it; Kokkos has the compressors' kernels only.
bool has_model_kernels(Backend backend);

}  // namespace lowcomm::kernels
