# Blocking, block DCT, top-k, scatter, sign, and the backends' memory and fill: each Cpu kernel
# against its Reference on random inputs of awkward sizes, at several OpenMP thread counts (hence
# OpenMP here), plus known values and every error path.
find_package(OpenMP REQUIRED COMPONENTS CXX)
lowcomm_add_unit_test(kernels_transform_test
  SOURCES
    ${CMAKE_CURRENT_LIST_DIR}/blocks_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/dct_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/dct_topk_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/topk_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/scatter_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/elementwise_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/memory_test.cpp
  LIBRARIES OpenMP::OpenMP_CXX)
