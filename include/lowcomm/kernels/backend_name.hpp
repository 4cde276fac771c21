#pragma once
// The backends a kernel can run on, and their names. Every kernel's declaration takes one; what a
// backend can do in this process (built, a device present, which kernels it has) is
// backend.hpp's, answered by the backends themselves.
#include <string_view>

namespace lowcomm::kernels {

enum class Backend {
  Reference,  // plain loops, written for clarity; the definition of the result
  Cpu,        // optimised for CPUs: OpenMP threads, vectorisable inner loops
  Kokkos,     // portable: kernels/kokkos, in Kokkos's default execution space (the compressors' kernels)
  Cuda,       // kernels/cuda, on this process's GPU
};

// "reference", "cpu", "kokkos", "cuda" (compute.backend's values).
constexpr std::string_view to_string(Backend backend) {
  switch (backend) {
    case Backend::Reference: return "reference";
    case Backend::Cpu: return "cpu";
    case Backend::Kokkos: return "kokkos";
    case Backend::Cuda: return "cuda";
  }
  return "?";
}

}  // namespace lowcomm::kernels
