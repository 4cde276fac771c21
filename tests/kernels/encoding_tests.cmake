# Encoding kernels, each backend against Reference, plus every error path and malformed input.
lowcomm_add_unit_test(kernels_encoding_test SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/pack_indices_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/pack_signs_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/pack_codes_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/quantize_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/orthonormalize_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/gemm_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/feedback_product_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/float16_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/malformed_input_test.cpp
  LIBRARIES GTest::gmock OpenMP::OpenMP_CXX)
