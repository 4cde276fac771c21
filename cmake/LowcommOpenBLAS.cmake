# OpenBLAS for the transformer kernels' matrix products (kernels/cpu/linear.cpp): on a 2-core
# machine its sgemm is what sets training speed. Found through pkg-config (Debian's
# libopenblas-dev ships openblas.pc pointing at the selected pthread/OpenMP/serial variant), else
# by name. Sets LOWCOMM_OPENBLAS_FOUND, LOWCOMM_OPENBLAS_LIBRARIES, LOWCOMM_OPENBLAS_INCLUDE_DIRS.
# Without it the kernels fall back to Eigen (LOWCOMM_WITH_OPENBLAS=OFF forces that).
set(LOWCOMM_WITH_OPENBLAS "AUTO" CACHE STRING "OpenBLAS for the transformer GEMMs: AUTO, ON, OFF")
set_property(CACHE LOWCOMM_WITH_OPENBLAS PROPERTY STRINGS AUTO ON OFF)

set(LOWCOMM_OPENBLAS_FOUND FALSE)
if(NOT LOWCOMM_WITH_OPENBLAS STREQUAL "OFF")
  find_package(PkgConfig QUIET)
  if(PKG_CONFIG_FOUND)
    pkg_check_modules(LOWCOMM_PC_OPENBLAS QUIET openblas)
  endif()
  if(LOWCOMM_PC_OPENBLAS_FOUND)
    set(LOWCOMM_OPENBLAS_LIBRARIES ${LOWCOMM_PC_OPENBLAS_LINK_LIBRARIES})
    set(LOWCOMM_OPENBLAS_INCLUDE_DIRS ${LOWCOMM_PC_OPENBLAS_INCLUDE_DIRS})
  else()
    find_library(LOWCOMM_OPENBLAS_LIBRARY NAMES openblas)
    find_path(LOWCOMM_OPENBLAS_INCLUDE_DIR cblas.h PATH_SUFFIXES openblas openblas-pthread openblas-openmp)
    if(LOWCOMM_OPENBLAS_LIBRARY AND LOWCOMM_OPENBLAS_INCLUDE_DIR)
      set(LOWCOMM_OPENBLAS_LIBRARIES ${LOWCOMM_OPENBLAS_LIBRARY})
      set(LOWCOMM_OPENBLAS_INCLUDE_DIRS ${LOWCOMM_OPENBLAS_INCLUDE_DIR})
    endif()
  endif()
  if(LOWCOMM_OPENBLAS_LIBRARIES)
    set(LOWCOMM_OPENBLAS_FOUND TRUE)
    message(STATUS "lowcomm: OpenBLAS for the transformer kernels: ${LOWCOMM_OPENBLAS_LIBRARIES}")
  elseif(LOWCOMM_WITH_OPENBLAS STREQUAL "ON")
    message(FATAL_ERROR "LOWCOMM_WITH_OPENBLAS=ON but OpenBLAS was not found (apt-get install libopenblas-dev)")
  else()
    message(STATUS "lowcomm: OpenBLAS not found; the transformer kernels use Eigen")
  endif()
endif()
