# The transformer layer kernels: embedding, layer norm, linear (sgemm), attention, GELU,
# residual add and softmax cross-entropy.
target_sources(lowcomm PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/embedding.cpp
  ${CMAKE_CURRENT_LIST_DIR}/layernorm.cpp
  ${CMAKE_CURRENT_LIST_DIR}/linear.cpp
  ${CMAKE_CURRENT_LIST_DIR}/attention.cpp
  ${CMAKE_CURRENT_LIST_DIR}/gelu.cpp
  ${CMAKE_CURRENT_LIST_DIR}/residual.cpp
  ${CMAKE_CURRENT_LIST_DIR}/cross_entropy.cpp)
