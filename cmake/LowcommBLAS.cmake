# The BLAS behind the CPU kernels' one matrix product (kernels/cpu/blas.hpp), chosen once at
# configure time with LOWCOMM_BLAS:
#   AUTO      OpenBLAS, its OpenMP build preferred (LowcommOpenBLAS.cmake says why), else Eigen
#   OpenBLAS  the same, but an error when OpenBLAS is missing
#   FindBLAS  CMake's FindBLAS: the vendor BLA_VENDOR names (Intel10_64lp or Intel10_64lp_seq for
#             MKL, FLAME for BLIS, OpenBLAS, Generic, ...; unset: FindBLAS's own search), plus a
#             cblas.h or MKL's mkl_cblas.h (searched for, or in LOWCOMM_CBLAS_INCLUDE_DIR) - a
#             cluster's site BLAS. Only 32-bit-integer (LP64) interfaces: blas.cpp passes int.
#   Eigen     no BLAS: Eigen's product
# Sets LOWCOMM_BLAS_KIND (OpenBLAS, CBLAS or Eigen), LOWCOMM_BLAS_LIBRARIES, LOWCOMM_BLAS_INCLUDE_DIRS
# and LOWCOMM_CBLAS_HEADER (the header to include).
set(LOWCOMM_BLAS "AUTO" CACHE STRING "BLAS for the CPU kernels' matrix products: AUTO, OpenBLAS, FindBLAS, Eigen")
set_property(CACHE LOWCOMM_BLAS PROPERTY STRINGS AUTO OpenBLAS FindBLAS Eigen)

set(LOWCOMM_BLAS_KIND Eigen)
set(LOWCOMM_BLAS_LIBRARIES "")
set(LOWCOMM_BLAS_INCLUDE_DIRS "")
set(LOWCOMM_CBLAS_HEADER cblas.h)
if(LOWCOMM_BLAS STREQUAL "AUTO" OR LOWCOMM_BLAS STREQUAL "OpenBLAS")
  include(LowcommOpenBLAS)
  if(LOWCOMM_OPENBLAS_FOUND)
    set(LOWCOMM_BLAS_KIND OpenBLAS)
    set(LOWCOMM_BLAS_LIBRARIES ${LOWCOMM_OPENBLAS_LIBRARIES})
    set(LOWCOMM_BLAS_INCLUDE_DIRS ${LOWCOMM_OPENBLAS_INCLUDE_DIRS})
  elseif(LOWCOMM_BLAS STREQUAL "OpenBLAS")
    message(FATAL_ERROR "LOWCOMM_BLAS=OpenBLAS but OpenBLAS was not found (apt-get install libopenblas-openmp-dev), "
                        "or use LOWCOMM_BLAS=FindBLAS with BLA_VENDOR for another BLAS")
  endif()
elseif(LOWCOMM_BLAS STREQUAL "FindBLAS")
  string(TOLOWER "${BLA_VENDOR}" vendor)
  if(vendor MATCHES "ilp" OR "${BLA_SIZEOF_INTEGER}" STREQUAL "8")
    message(FATAL_ERROR "LOWCOMM_BLAS=FindBLAS: BLA_VENDOR=${BLA_VENDOR} is a 64-bit-integer (ILP64) interface; "
                        "lowcomm calls the 32-bit one: use the LP64 variant (e.g. Intel10_64lp)")
  endif()
  find_package(BLAS REQUIRED)
  set(LOWCOMM_CBLAS_INCLUDE_DIR "" CACHE PATH "directory holding the BLAS's cblas.h (LOWCOMM_BLAS=FindBLAS)")
  if(NOT LOWCOMM_CBLAS_INCLUDE_DIR)
    find_path(LOWCOMM_CBLAS_HEADER_DIR NAMES cblas.h mkl_cblas.h
              HINTS ENV MKLROOT ENV BLIS_HOME PATH_SUFFIXES include include/blis blis)
    set(LOWCOMM_CBLAS_INCLUDE_DIR "${LOWCOMM_CBLAS_HEADER_DIR}")
  endif()
  if(EXISTS "${LOWCOMM_CBLAS_INCLUDE_DIR}/cblas.h")
    set(LOWCOMM_CBLAS_HEADER cblas.h)
  elseif(EXISTS "${LOWCOMM_CBLAS_INCLUDE_DIR}/mkl_cblas.h")
    set(LOWCOMM_CBLAS_HEADER mkl_cblas.h)
  else()
    message(FATAL_ERROR "LOWCOMM_BLAS=FindBLAS found ${BLAS_LIBRARIES} but no cblas.h or mkl_cblas.h: "
                        "set LOWCOMM_CBLAS_INCLUDE_DIR to the directory that holds it")
  endif()
  set(LOWCOMM_BLAS_KIND CBLAS)
  set(LOWCOMM_BLAS_LIBRARIES ${BLAS_LIBRARIES})
  set(LOWCOMM_BLAS_INCLUDE_DIRS "${LOWCOMM_CBLAS_INCLUDE_DIR}")
elseif(NOT LOWCOMM_BLAS STREQUAL "Eigen")
  message(FATAL_ERROR "LOWCOMM_BLAS=${LOWCOMM_BLAS}: use AUTO, OpenBLAS, FindBLAS or Eigen")
endif()
if(LOWCOMM_BLAS_KIND STREQUAL "Eigen")
  message(STATUS "lowcomm: the CPU kernels' matrix products use Eigen (no BLAS)")
else()
  message(STATUS "lowcomm: the CPU kernels' matrix products use ${LOWCOMM_BLAS_KIND}: ${LOWCOMM_BLAS_LIBRARIES}")
endif()
