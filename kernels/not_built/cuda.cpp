// Backend::Cuda in a build without it (configure with CUDA, preset cuda, for ../cuda).
#include "../absent.hpp"
#include "../backend_kernels.hpp"

namespace lowcomm::kernels::cuda_backend {

std::string unavailable_reason() {
  return "this build has no CUDA kernels; configure with CUDA (preset cuda, nvcc 12 or newer)";
}

#include "not_built.inc"

}  // namespace lowcomm::kernels::cuda_backend
