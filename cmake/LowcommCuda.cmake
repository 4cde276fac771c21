# The CUDA toolchain for kernels/cuda: nvcc 12 or newer (the kernels include C++20 headers), the
# runtime and cuBLAS from the toolkit. Architectures: CMAKE_CUDA_ARCHITECTURES when given, else
# sm_80 and sm_90 (A100, H100/H200), the GPUs the published runs used.
if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
  set(CMAKE_CUDA_ARCHITECTURES 80 90)
endif()
enable_language(CUDA)
if(CMAKE_CUDA_COMPILER_VERSION VERSION_LESS 12.0)
  set(too_old "nvcc ${CMAKE_CUDA_COMPILER_VERSION} is too old: the CUDA kernels need CUDA 12 or newer (C++20)")
  if(LOWCOMM_ENABLE_CUDA STREQUAL "ON")
    message(FATAL_ERROR "lowcomm: ${too_old}. Load a newer CUDA module, or use -DLOWCOMM_ENABLE_CUDA=OFF")
  endif()
  message(WARNING "lowcomm: CUDA disabled, ${too_old}")
  return()
endif()
# CMake before 3.26 knows no C++20 flag for nvcc (12 and newer take -std=c++20): teach it, so the
# C++20 the library asks for also reaches the CUDA sources.
if(NOT DEFINED CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
  set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
  set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
  list(APPEND CMAKE_CUDA20_COMPILE_FEATURES cuda_std_20)
  list(APPEND CMAKE_CUDA_COMPILE_FEATURES cuda_std_20)
endif()
find_package(CUDAToolkit REQUIRED)
set(LOWCOMM_HAVE_CUDA ON)
message(STATUS "lowcomm: CUDA enabled (nvcc ${CMAKE_CUDA_COMPILER_VERSION}, architectures ${CMAKE_CUDA_ARCHITECTURES})")

# NCCL, for comm.transport = nccl (lib/comm/nccl_transport.cpp): the toolkit's own copy, or one
# under NCCL_ROOT (a site's module). Optional: without it the build has the MPI transport only.
set(LOWCOMM_ENABLE_NCCL "AUTO" CACHE STRING "NCCL transport in a CUDA build: AUTO (where nccl.h and libnccl are found), ON, OFF")
set_property(CACHE LOWCOMM_ENABLE_NCCL PROPERTY STRINGS AUTO ON OFF)
set(LOWCOMM_HAVE_NCCL OFF)
if(NOT LOWCOMM_ENABLE_NCCL STREQUAL "OFF")
  find_path(LOWCOMM_NCCL_INCLUDE_DIR nccl.h HINTS ${NCCL_ROOT} $ENV{NCCL_ROOT} ${CUDAToolkit_INCLUDE_DIRS}
            PATH_SUFFIXES include)
  find_library(LOWCOMM_NCCL_LIBRARY nccl HINTS ${NCCL_ROOT} $ENV{NCCL_ROOT} ${CUDAToolkit_LIBRARY_DIR}
               PATH_SUFFIXES lib lib64)
  # 2.14 or newer: nccl_transport.cpp uses ncclGetLastError and ncclInProgress.
  set(nccl_version "")
  if(LOWCOMM_NCCL_INCLUDE_DIR)
    file(STRINGS "${LOWCOMM_NCCL_INCLUDE_DIR}/nccl.h" nccl_defines REGEX "^#define NCCL_(MAJOR|MINOR|PATCH) +[0-9]+")
    string(REGEX REPLACE ".*NCCL_MAJOR +([0-9]+).*NCCL_MINOR +([0-9]+).*NCCL_PATCH +([0-9]+).*" "\\1.\\2.\\3"
           nccl_version "${nccl_defines}")
  endif()
  if(LOWCOMM_NCCL_INCLUDE_DIR AND LOWCOMM_NCCL_LIBRARY AND nccl_version VERSION_LESS 2.14)
    set(nccl_too_old "NCCL ${nccl_version} at ${LOWCOMM_NCCL_INCLUDE_DIR} is older than 2.14")
    if(LOWCOMM_ENABLE_NCCL STREQUAL "ON")
      message(FATAL_ERROR "lowcomm: ${nccl_too_old}: load a newer NCCL (NCCL_ROOT), or use -DLOWCOMM_ENABLE_NCCL=OFF")
    endif()
    message(STATUS "lowcomm: ${nccl_too_old}: comm.transport = nccl is not in this build")
  elseif(LOWCOMM_NCCL_INCLUDE_DIR AND LOWCOMM_NCCL_LIBRARY)
    add_library(lowcomm_nccl INTERFACE IMPORTED)
    target_include_directories(lowcomm_nccl INTERFACE ${LOWCOMM_NCCL_INCLUDE_DIR})
    target_link_libraries(lowcomm_nccl INTERFACE ${LOWCOMM_NCCL_LIBRARY})
    set(LOWCOMM_HAVE_NCCL ON)
    message(STATUS "lowcomm: NCCL ${nccl_version} transport enabled (${LOWCOMM_NCCL_LIBRARY})")
  elseif(LOWCOMM_ENABLE_NCCL STREQUAL "ON")
    message(FATAL_ERROR "LOWCOMM_ENABLE_NCCL=ON but nccl.h or libnccl was not found: set NCCL_ROOT, "
                        "or use -DLOWCOMM_ENABLE_NCCL=OFF")
  else()
    message(STATUS "lowcomm: NCCL not found: comm.transport = nccl is not in this build (set NCCL_ROOT to add it)")
  endif()
endif()
