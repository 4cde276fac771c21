# Build facts the library reports at run time (`lowcomm info`, the run log's root attributes).
# The git revision is re-read on every build (not only at configure time), so a log never names
# a stale revision; the file is rewritten only when its content changes, so nothing recompiles
# needlessly.
set(LOWCOMM_GENERATED_DIR "${PROJECT_BINARY_DIR}/generated")

add_custom_target(lowcomm_git_revision
  COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${PROJECT_SOURCE_DIR}
          -DOUTPUT=${LOWCOMM_GENERATED_DIR}/lowcomm_git_revision.inc
          -P ${PROJECT_SOURCE_DIR}/cmake/WriteGitRevision.cmake
  BYPRODUCTS ${LOWCOMM_GENERATED_DIR}/lowcomm_git_revision.inc
  COMMENT "Reading the git revision"
  VERBATIM)

function(lowcomm_attach_build_info target)
  set(LOWCOMM_HAVE_CUDA_BOOL false)
  set(LOWCOMM_HAVE_KOKKOS_BOOL false)
  if(LOWCOMM_HAVE_CUDA)
    set(LOWCOMM_HAVE_CUDA_BOOL true)
  endif()
  if(LOWCOMM_HAVE_KOKKOS)
    set(LOWCOMM_HAVE_KOKKOS_BOOL true)
  endif()
  set(LOWCOMM_CUDA_VERSION "")
  if(LOWCOMM_HAVE_CUDA)
    set(LOWCOMM_CUDA_VERSION "${CMAKE_CUDA_COMPILER_VERSION}")
  endif()
  set(LOWCOMM_KOKKOS_VERSION "")
  if(LOWCOMM_HAVE_KOKKOS)
    set(LOWCOMM_KOKKOS_VERSION "${Kokkos_VERSION}")
  endif()
  set(LOWCOMM_BUILD_OPTIONS "BUILD_SHARED_LIBS=${BUILD_SHARED_LIBS} LOWCOMM_ENABLE_CUDA=${LOWCOMM_ENABLE_CUDA} LOWCOMM_ENABLE_KOKKOS=${LOWCOMM_ENABLE_KOKKOS} LOWCOMM_BLAS=${LOWCOMM_BLAS} LOWCOMM_NATIVE_ARCH=${LOWCOMM_NATIVE_ARCH}")
  string(STRIP "${CMAKE_CXX_FLAGS}" extra_flags)
  if(extra_flags)
    string(APPEND LOWCOMM_BUILD_OPTIONS " CXX_FLAGS: ${extra_flags}")
  endif()
  configure_file(${PROJECT_SOURCE_DIR}/cmake/build_info.cpp.in ${LOWCOMM_GENERATED_DIR}/build_info.cpp @ONLY)
  target_sources(${target} PRIVATE ${LOWCOMM_GENERATED_DIR}/build_info.cpp)
  target_include_directories(${target} PRIVATE ${LOWCOMM_GENERATED_DIR})
  add_dependencies(${target} lowcomm_git_revision)
endfunction()
