# The one matrix product of the CPU kernels (blas.hpp), on the BLAS LowcommBLAS.cmake chose
# (included by the top-level CMakeLists.txt).
target_sources(lowcomm PRIVATE ${CMAKE_CURRENT_LIST_DIR}/blas.cpp)
if(NOT LOWCOMM_BLAS_KIND STREQUAL "Eigen")
  # Only blas.cpp sees cblas.h: nothing else in lowcomm depends on which BLAS is installed.
  string(REPLACE ";" " " blas_description "${LOWCOMM_BLAS_LIBRARIES}")
  set(blas_definitions LOWCOMM_HAVE_CBLAS=1 "LOWCOMM_CBLAS_LIBRARIES=\"${blas_description}\""
      "LOWCOMM_CBLAS_HEADER=\"${LOWCOMM_CBLAS_HEADER}\"")
  if(LOWCOMM_BLAS_KIND STREQUAL "OpenBLAS")
    list(APPEND blas_definitions LOWCOMM_HAVE_OPENBLAS=1)
  endif()
  set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/blas.cpp TARGET_DIRECTORY lowcomm PROPERTIES
    COMPILE_DEFINITIONS "${blas_definitions}"
    INCLUDE_DIRECTORIES "${LOWCOMM_BLAS_INCLUDE_DIRS}")
  target_link_libraries(lowcomm PRIVATE ${LOWCOMM_BLAS_LIBRARIES})
  # Debian's OpenMP variant lives beside the default (alternatives-selected, usually pthread)
  # libopenblas.so.0 under the same soname: the build tree's RPATH already points at the variant
  # CMake linked; give the installed library the same, or it would load the pthread build.
  foreach(library IN LISTS LOWCOMM_BLAS_LIBRARIES)
    get_filename_component(directory "${library}" DIRECTORY)
    if(directory MATCHES "openblas-openmp$")
      set_property(TARGET lowcomm APPEND PROPERTY INSTALL_RPATH "${directory}")
    endif()
  endforeach()
endif()
