#pragma once
// Whether the MPI library takes GPU memory in its calls ("CUDA-aware"), as it reports it itself:
// Open MPI's mpi-ext.h says whether it was built with CUDA support (MPIX_CUDA_AWARE_SUPPORT), and
// MPIX_Query_cuda_support() whether that support is on in this run (after MPI_Init). Other MPI
// libraries report nothing this way, and are taken as not CUDA-aware.
//
// lowcomm's collectives move host memory today (a compressor's payload is built on the host, and
// the model's and strategies' managed buffers are read there), so this is reported, for
// `lowcomm info` and for choosing a transport later, but not yet used.
#include <string>

namespace lowcomm {

struct MpiCudaSupport {
  bool reported = false;     // the library has the query (Open MPI's cuda extension)
  bool built = false;        // built with CUDA support
  bool in_this_run = false;  // and it is on (false before MPI_Init)
};

MpiCudaSupport mpi_cuda_support();

// "yes", or why not in words: "no: built without CUDA support (mpi-ext.h: MPIX_CUDA_AWARE_SUPPORT
// 0)", "not reported (this MPI has no MPIX_Query_cuda_support): taken as no", ...
std::string describe(const MpiCudaSupport& support);

}  // namespace lowcomm
