# Decides which optional accelerator back-ends are built. The CPU build needs neither.
include(CheckLanguage)

set(LOWCOMM_HAVE_CUDA OFF)
if(NOT LOWCOMM_ENABLE_CUDA STREQUAL "OFF")
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    include(LowcommCuda)
  elseif(LOWCOMM_ENABLE_CUDA STREQUAL "ON")
    message(FATAL_ERROR "LOWCOMM_ENABLE_CUDA=ON but no CUDA compiler was found: "
                        "put nvcc on PATH or set CMAKE_CUDA_COMPILER, or use -DLOWCOMM_ENABLE_CUDA=OFF")
  else()
    message(STATUS "lowcomm: CUDA disabled (no nvcc found)")
  endif()
endif()

set(LOWCOMM_HAVE_KOKKOS OFF)
if(LOWCOMM_ENABLE_KOKKOS)
  include(LowcommKokkos)
  set(LOWCOMM_HAVE_KOKKOS ON)
  message(STATUS "lowcomm: Kokkos ${Kokkos_VERSION} enabled")
endif()
