# Encoding kernels: index and sign packing, b-bit quantisation, Gram-Schmidt and GEMM.
target_sources(lowcomm PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/pack_indices.cpp
  ${CMAKE_CURRENT_LIST_DIR}/pack_signs.cpp
  ${CMAKE_CURRENT_LIST_DIR}/quantize.cpp
  ${CMAKE_CURRENT_LIST_DIR}/orthonormalize.cpp
  ${CMAKE_CURRENT_LIST_DIR}/gemm.cpp
  ${CMAKE_CURRENT_LIST_DIR}/thin_gemm.cpp)

# Eigen is header-only and used only inside the library: BUILD_INTERFACE keeps it out of the
# exported link interface, so a project using an installed static liblowcomm need not find it.
find_package(Eigen3 3.3 REQUIRED NO_MODULE)
target_link_libraries(lowcomm PRIVATE $<BUILD_INTERFACE:Eigen3::Eigen>)
