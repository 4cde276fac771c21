#pragma once
// The CUDA backend's device and stream, for the library's other CUDA code (the NCCL transport in
// lib/comm), so that it needs none of kernels/cuda's private headers. Defined in
// kernels/cuda/runtime.cpp; exists in CUDA builds only. No CUDA header is needed to include it.
#include <string>

namespace lowcomm::kernels::cuda_device {

// "" when this process's device is usable; otherwise why not (cuda_backend::unavailable_reason).
std::string unavailable_reason();

// The stream the backend's kernels run on, as a cudaStream_t, with this process's device made
// current on the calling thread. Throws lowcomm::Error when no device is usable.
void* stream();

// Whether device code can read `pointer` in place (device or managed memory).
bool device_accessible(const void* pointer);

// Throws lowcomm::Error "CUDA: <what> failed: ..." unless `status` (a cudaError_t) is cudaSuccess.
void check(int status, const char* what);

}  // namespace lowcomm::kernels::cuda_device
