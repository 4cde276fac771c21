# Test helpers: plain GoogleTest executables, and MPI GoogleTest executables that CTest runs
# through mpiexec at several rank counts (oversubscribed, so 4 ranks run on a 2-core machine).
find_package(GTest REQUIRED)

set(LOWCOMM_TEST_TIMEOUT 300 CACHE STRING "Seconds before CTest kills a hung test")
set(LOWCOMM_MPIEXEC_FLAGS --oversubscribe --bind-to none CACHE STRING "Extra flags for mpiexec in tests")

# Environment every MPI test runs with: Open MPI refuses to run as root without these, and the
# sanitizers must not report Open MPI's own allocations as leaks.
set(LOWCOMM_TEST_ENVIRONMENT
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
  ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1)

# lowcomm_add_unit_test(<name> SOURCES ...): a GoogleTest executable run once, without mpiexec.
function(lowcomm_add_unit_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBRARIES" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE lowcomm::lowcomm GTest::gtest GTest::gtest_main ${ARG_LIBRARIES})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/tests)  # support/*.hpp
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES TIMEOUT ${LOWCOMM_TEST_TIMEOUT}
                                          ENVIRONMENT "${LOWCOMM_TEST_ENVIRONMENT}")
endfunction()

# lowcomm_add_mpi_test(<name> SOURCES ... RANKS 1 2 3 4): one CTest test per rank count,
# named <name>.np<N>. A failure on any rank fails the test (see tests/support/mpi_gtest_main.cpp).
function(lowcomm_add_mpi_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBRARIES;RANKS" ${ARGN})
  if(NOT ARG_RANKS)
    set(ARG_RANKS 1 2 3 4)
  endif()
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE lowcomm::lowcomm lowcomm_mpi_gtest_main ${ARG_LIBRARIES})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/tests)  # support/*.hpp
  foreach(ranks IN LISTS ARG_RANKS)
    add_test(NAME ${name}.np${ranks}
             COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${ranks} ${LOWCOMM_MPIEXEC_FLAGS}
                     ${MPIEXEC_PREFLAGS} $<TARGET_FILE:${name}> ${MPIEXEC_POSTFLAGS})
    set_tests_properties(${name}.np${ranks} PROPERTIES TIMEOUT ${LOWCOMM_TEST_TIMEOUT}
                         PROCESSORS ${ranks} ENVIRONMENT "${LOWCOMM_TEST_ENVIRONMENT}")
  endforeach()
endfunction()

# What a test prints where it skipped for want of a GPU: the start of each of the CUDA backend's
# unavailable reasons (kernels/cuda/runtime.cpp). CTest reports such a test as skipped, not passed;
# matching GTest's "[  SKIPPED ]" instead would also hide a GPU run in which one case skipped for
# its own reasons.
# (And NCCL's refusal of two ranks on one GPU, where a test asks for more ranks than there are GPUs.)
set(LOWCOMM_NO_GPU_REGEX
    "no usable CUDA device for this process|CUDA device [0-9]+ of [0-9]+ cannot be used|ranks [0-9]+ and [0-9]+ share the GPU")

# lowcomm_add_backend_test(<mpi test> BACKEND kokkos|cuda [TRANSPORT nccl] RANKS 1 2 LABELS ...):
# runs an MPI test made by lowcomm_add_mpi_test once more with LOWCOMM_TEST_BACKEND=<backend>
# (tests/support/test_backend.hpp), as <name>.<backend>.np<N>; with TRANSPORT, also with
# LOWCOMM_TEST_TRANSPORT=<transport>, as <name>.<backend>.<transport>.np<N>. One that skips for
# want of a GPU is reported as skipped, not passed.
function(lowcomm_add_backend_test name)
  cmake_parse_arguments(ARG "" "BACKEND;TRANSPORT" "RANKS;LABELS" ${ARGN})
  set(variant ${ARG_BACKEND})
  set(environment "${LOWCOMM_TEST_ENVIRONMENT};LOWCOMM_TEST_BACKEND=${ARG_BACKEND}")
  if(ARG_TRANSPORT)
    string(APPEND variant .${ARG_TRANSPORT})
    list(APPEND environment LOWCOMM_TEST_TRANSPORT=${ARG_TRANSPORT})
  endif()
  foreach(ranks IN LISTS ARG_RANKS)
    set(test ${name}.${variant}.np${ranks})
    add_test(NAME ${test}
             COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${ranks} ${LOWCOMM_MPIEXEC_FLAGS}
                     ${MPIEXEC_PREFLAGS} $<TARGET_FILE:${name}> ${MPIEXEC_POSTFLAGS})
    set_tests_properties(${test} PROPERTIES TIMEOUT ${LOWCOMM_TEST_TIMEOUT} PROCESSORS ${ranks}
                         LABELS "${ARG_LABELS}" SKIP_REGULAR_EXPRESSION "${LOWCOMM_NO_GPU_REGEX}"
                         ENVIRONMENT "${environment}")
  endforeach()
endfunction()
