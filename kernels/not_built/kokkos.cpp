// Backend::Kokkos in a build without it (configure with -DLOWCOMM_ENABLE_KOKKOS=ON for ../kokkos).
#include "../absent.hpp"
#include "../backend_kernels.hpp"

namespace lowcomm::kernels::kokkos_backend {

std::string unavailable_reason() {
  return "this build has no Kokkos kernels; configure with -DLOWCOMM_ENABLE_KOKKOS=ON (preset kokkos)";
}

#include "not_built.inc"

}  // namespace lowcomm::kernels::kokkos_backend
