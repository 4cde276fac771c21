# find_package(Kokkos), and Kokkos-Kernels where found (then the Kokkos backend's GEMM is
# KokkosBlas::gemm: the vendor BLAS, cuBLAS or rocBLAS behind it, as the site built it). Sets
# LOWCOMM_HAVE_KOKKOS_KERNELS and LOWCOMM_KOKKOS_KERNELS_TARGET.
#
# Kokkos needs one repair on Debian 12 (Kokkos 3.4, libtrilinos-kokkos-dev)
# needs: its Kokkos::kokkos names the include directory /usr/lib/include, which does not exist
# (the headers are in /usr/include/trilinos), and CMake refuses a target with a missing include
# path. The repair applies only when that broken path is there, so a site's own Kokkos install
# is used as it is.
find_package(Kokkos REQUIRED)
get_target_property(_lowcomm_kokkos_includes Kokkos::kokkos INTERFACE_INCLUDE_DIRECTORIES)
set(_lowcomm_kokkos_repaired "")
foreach(_dir IN LISTS _lowcomm_kokkos_includes)
  if(_dir MATCHES "^/" AND NOT EXISTS "${_dir}")
    if(EXISTS "/usr/include/trilinos/Kokkos_Core.hpp")
      message(STATUS "lowcomm: Kokkos names the missing include directory ${_dir}; using /usr/include/trilinos")
      list(APPEND _lowcomm_kokkos_repaired /usr/include/trilinos)
      continue()
    endif()
  endif()
  list(APPEND _lowcomm_kokkos_repaired "${_dir}")
endforeach()
list(REMOVE_DUPLICATES _lowcomm_kokkos_repaired)
set_target_properties(Kokkos::kokkos PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${_lowcomm_kokkos_repaired}")

# Kokkos-Kernels: a proper install exports Kokkos::kokkoskernels; Trilinos' (Debian's
# libtrilinos-kokkos-kernels-dev) exports trilinos_kokkoskernels instead.
set(LOWCOMM_HAVE_KOKKOS_KERNELS OFF)
find_package(KokkosKernels QUIET)
foreach(_target Kokkos::kokkoskernels trilinos_kokkoskernels)
  if(KokkosKernels_FOUND AND TARGET ${_target})
    set(LOWCOMM_HAVE_KOKKOS_KERNELS ON)
    set(LOWCOMM_KOKKOS_KERNELS_TARGET ${_target})
    message(STATUS "lowcomm: Kokkos-Kernels found (${_target}): the kokkos backend's GEMM is KokkosBlas::gemm")
    break()
  endif()
endforeach()
if(NOT LOWCOMM_HAVE_KOKKOS_KERNELS)
  message(STATUS "lowcomm: Kokkos-Kernels not found: the kokkos backend's GEMM is a plain Kokkos loop")
endif()
