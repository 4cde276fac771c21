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
configure_package_config_file(cmake/lowcommConfig.cmake.in
  ${PROJECT_BINARY_DIR}/lowcommConfig.cmake INSTALL_DESTINATION ${LOWCOMM_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/lowcommConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/lowcommConfig.cmake ${PROJECT_BINARY_DIR}/lowcommConfigVersion.cmake
        DESTINATION ${LOWCOMM_CMAKE_DIR})
