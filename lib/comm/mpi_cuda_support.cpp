#include "lowcomm/comm/mpi_cuda_support.hpp"

#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif

namespace lowcomm {

MpiCudaSupport mpi_cuda_support() {
  MpiCudaSupport support;
#if defined(MPIX_CUDA_AWARE_SUPPORT)
  support.reported = true;
  support.built = MPIX_CUDA_AWARE_SUPPORT != 0;
  int initialized = 0;
  MPI_Initialized(&initialized);
  support.in_this_run = support.built && initialized != 0 && MPIX_Query_cuda_support() != 0;
#endif
  return support;
}

std::string describe(const MpiCudaSupport& support) {
  if (!support.reported) return "not reported (this MPI has no MPIX_Query_cuda_support): taken as no";
  if (!support.built) return "no: built without CUDA support (mpi-ext.h: MPIX_CUDA_AWARE_SUPPORT 0)";
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized == 0) return "built with CUDA support (whether it is on shows once MPI has started)";
  return support.in_this_run ? "yes" : "no: built with CUDA support, but MPIX_Query_cuda_support() is 0 in this run";
}

}  // namespace lowcomm
