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
