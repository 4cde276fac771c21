# OpenBLAS for the CPU kernels' one matrix product (kernels/cpu/blas.hpp: the transformer's linear
# layers, PowerSGD's products): on a 2-core machine its sgemm is what sets training speed. The OpenMP build of OpenBLAS is preferred: it
# runs its GEMMs on the same OpenMP thread pool as our kernels. The pthread build keeps a second
# pool, and libgomp's threads spin-wait after every parallel region (OMP_WAIT_POLICY unset), so
# the two pools fight over the cores: measured 1.7× slower per GPT-2 step on 2 cores. Debian
# installs the variants side by side (libopenblas-openmp-dev: .../openblas-openmp/); otherwise
# pkg-config's openblas (whatever variant it selects), else the library by name. Sets LOWCOMM_OPENBLAS_FOUND, LOWCOMM_OPENBLAS_LIBRARIES, LOWCOMM_OPENBLAS_INCLUDE_DIRS.
# Included by LowcommBLAS.cmake, which decides what happens when it is not found.

set(LOWCOMM_OPENBLAS_FOUND FALSE)
if(TRUE)
  find_library(LOWCOMM_OPENBLAS_OPENMP_LIBRARY NAMES openblas NO_DEFAULT_PATH
               PATHS /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}/openblas-openmp)
  find_path(LOWCOMM_OPENBLAS_OPENMP_INCLUDE_DIR cblas.h NO_DEFAULT_PATH
            PATHS /usr/include/${CMAKE_LIBRARY_ARCHITECTURE}/openblas-openmp)
  find_package(PkgConfig QUIET)
  if(LOWCOMM_OPENBLAS_OPENMP_LIBRARY AND LOWCOMM_OPENBLAS_OPENMP_INCLUDE_DIR)
    set(LOWCOMM_OPENBLAS_LIBRARIES ${LOWCOMM_OPENBLAS_OPENMP_LIBRARY})
    set(LOWCOMM_OPENBLAS_INCLUDE_DIRS ${LOWCOMM_OPENBLAS_OPENMP_INCLUDE_DIR})
  elseif(PKG_CONFIG_FOUND)
    pkg_check_modules(LOWCOMM_PC_OPENBLAS QUIET openblas)
  endif()
  if(LOWCOMM_OPENBLAS_LIBRARIES)
    # found above
  elseif(LOWCOMM_PC_OPENBLAS_FOUND)
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
  endif()
endif()
