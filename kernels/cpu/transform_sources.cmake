# Blocking, block DCT, top-k and scatter: the transforms of DeMo and top-k sparsification.
target_sources(lowcomm PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/blocks.cpp
  ${CMAKE_CURRENT_LIST_DIR}/dct.cpp
  ${CMAKE_CURRENT_LIST_DIR}/dct_topk.cpp
  ${CMAKE_CURRENT_LIST_DIR}/topk.cpp
  ${CMAKE_CURRENT_LIST_DIR}/scatter.cpp)
