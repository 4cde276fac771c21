# The one matrix product of the CPU kernels (blas.hpp): OpenBLAS when found, else Eigen.
target_sources(lowcomm PRIVATE ${CMAKE_CURRENT_LIST_DIR}/blas.cpp)
include(LowcommOpenBLAS)
if(LOWCOMM_OPENBLAS_FOUND)
  # Only blas.cpp sees cblas.h: nothing else in lowcomm depends on which BLAS is installed.
  set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/blas.cpp TARGET_DIRECTORY lowcomm PROPERTIES
    COMPILE_DEFINITIONS LOWCOMM_HAVE_OPENBLAS=1
    INCLUDE_DIRECTORIES "${LOWCOMM_OPENBLAS_INCLUDE_DIRS}")
  target_link_libraries(lowcomm PRIVATE ${LOWCOMM_OPENBLAS_LIBRARIES})
  # Debian's OpenMP variant lives beside the default (alternatives-selected, usually pthread)
  # libopenblas.so.0 under the same soname: the build tree's RPATH already points at the variant
  # CMake linked; give the installed library the same, or it would load the pthread build.
  foreach(library IN LISTS LOWCOMM_OPENBLAS_LIBRARIES)
    get_filename_component(directory "${library}" DIRECTORY)
    if(directory MATCHES "openblas-openmp$")
      set_property(TARGET lowcomm APPEND PROPERTY INSTALL_RPATH "${directory}")
    endif()
  endforeach()
endif()
