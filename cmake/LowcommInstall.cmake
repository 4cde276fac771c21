# `cmake --install` puts headers, the library and a package config in place, so that an outside
# project does `find_package(lowcomm CONFIG REQUIRED)` and links `lowcomm::lowcomm`.
include(CMakePackageConfigHelpers)

install(TARGETS lowcomm EXPORT lowcommTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY include/lowcomm DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

set(LOWCOMM_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/lowcomm)
install(EXPORT lowcommTargets NAMESPACE lowcomm:: DESTINATION ${LOWCOMM_CMAKE_DIR})
# The switches lowcommConfig.cmake.in reads to find a static library's accelerator dependencies:
# OFF where this build has no such accelerator (the modules that set them did not run).
foreach(switch LOWCOMM_HAVE_CUDA LOWCOMM_HAVE_NCCL LOWCOMM_HAVE_KOKKOS LOWCOMM_HAVE_KOKKOS_KERNELS)
  if(NOT ${switch})
    set(${switch} OFF)
  endif()
endforeach()
configure_package_config_file(cmake/lowcommConfig.cmake.in
  ${PROJECT_BINARY_DIR}/lowcommConfig.cmake INSTALL_DESTINATION ${LOWCOMM_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/lowcommConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/lowcommConfig.cmake ${PROJECT_BINARY_DIR}/lowcommConfigVersion.cmake
        DESTINATION ${LOWCOMM_CMAKE_DIR})
