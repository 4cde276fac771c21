# find_package(Kokkos), with the one repair Debian 12's Kokkos 3.4 (libtrilinos-kokkos-dev)
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
