// Block DCT-II and its inverse (dct.hpp) as matrix products on cuBLAS, in the Reference's two
// passes (encode: T = X·C_wᵀ, then Q = C_h·T; decode: U = Q·C_w, then X = C_hᵀ·U). cuBLAS sums in
// an order of its own, with fused multiply-adds, so the result matches the Reference within float
// rounding, not bitwise.
//  - The C_w pass treats every w-long row segment alike, in tensor and coefficient layout both, so
//    it is one product over the whole tensor read as size / w rows of w.
//  - The C_h pass mixes a block's h rows, so it runs in coefficient layout, where every block is a
//    contiguous h × w matrix: one strided batched product over the blocks.
//  - Between the two, or after them, a kernel moves the elements between tensor and coefficient
//    layout (a copy, exact).
// The output span holds the first pass's result, so one tensor-sized buffer is the only scratch.
#include <cstdint>
#include <map>
#include <mutex>
#include <span>
#include <utility>
#include <vector>

#include "cuda_blas.cuh"
#include "cuda_memory.cuh"
#include "lowcomm/kernels/dct.hpp"

namespace lowcomm::kernels::cuda_backend {

namespace {

// Where element e of the coefficient layout (block e / (h·w), row e % (h·w) / w, column e % w of
// it) sits in the tensor; block_origin in kernels/dct_blocks.hpp, plus the element's offset.
struct TensorOffset {
  std::int64_t rows, cols, block_rows, block_cols;
  __device__ std::int64_t operator()(std::int64_t e) const {
    const std::int64_t block = e / (block_rows * block_cols);
    const std::int64_t r = e % (block_rows * block_cols) / block_cols;
    const std::int64_t c = e % block_cols;
    const std::int64_t per_row = cols / block_cols;
    const std::int64_t per_matrix = (rows / block_rows) * per_row;
    const std::int64_t b = block / per_matrix;
    const std::int64_t br = block % per_matrix / per_row;
    const std::int64_t bc = block % per_row;
    return (b * rows + br * block_rows + r) * cols + bc * block_cols + c;
  }
};

TensorOffset offsets_of(const BlockLayout& l) { return {l.rows, l.cols, l.block_rows, l.block_cols}; }

__global__ void to_coefficient_layout(TensorOffset at, std::int64_t size, const float* tensor, float* blocks) {
  for (std::int64_t e = first_item(); e < size; e += item_stride()) blocks[e] = tensor[at(e)];
}

__global__ void to_tensor_layout(TensorOffset at, std::int64_t size, const float* blocks, float* tensor) {
  for (std::int64_t e = first_item(); e < size; e += item_stride()) tensor[at(e)] = blocks[e];
}

// dct_basis(length) on the device, copied once per length and kept for the process. The map is
// never destroyed: its buffers' destructors would free them at exit, possibly after the CUDA
// runtime has shut down.
const float* device_basis(std::int64_t length) {
  static std::mutex mutex;
  static auto* const bases = new std::map<std::int64_t, DeviceBuffer<float>>;
  const std::lock_guard lock(mutex);
  if (const auto found = bases->find(length); found != bases->end()) return found->second.data();
  const std::vector<float> basis = dct_basis(length);
  DeviceBuffer<float> copy(basis.size());
  check(cudaMemcpyAsync(copy.data(), basis.data(), basis.size() * sizeof(float), cudaMemcpyHostToDevice, stream()),
        "cudaMemcpyAsync (DCT basis to the device)");
  synchronize("the DCT basis's copy");  // `basis` goes on return
  return bases->emplace(length, std::move(copy)).first->second.data();
}

}  // namespace

void dct_encode_blocks(const BlockLayout& layout, std::span<const float> tensor, std::span<float> coefficients) {
  const std::int64_t h = layout.block_rows, w = layout.block_cols, size = layout.size();
  const float* ch = device_basis(h);
  const float* cw = device_basis(w);
  const Input<float> x(tensor);
  Output<float> q(coefficients);
  const DeviceBuffer<float> t(static_cast<std::size_t>(size));
  // Y[r][j] = Σ_c X[r][c]·C_w[j][c] for every row segment, still in tensor layout (in q).
  row_major_gemm(false, true, size / w, w, w, 1.0f, x.data(), 0, cw, 0, 0.0f, q.data(), 0, 1);
  // T: Y block after block.
  launch("dct_encode_blocks (to coefficient layout)", to_coefficient_layout, size, offsets_of(layout), size,
         q.data(), t.data());
  // Q[i][j] = Σ_r C_h[i][r]·T[r][j] for every block.
  row_major_gemm(false, false, h, w, h, 1.0f, ch, 0, t.data(), h * w, 0.0f, q.data(), h * w, layout.blocks());
  q.finish();
}

void dct_decode_blocks(const BlockLayout& layout, std::span<const float> coefficients, std::span<float> tensor) {
  const std::int64_t h = layout.block_rows, w = layout.block_cols, size = layout.size();
  const float* ch = device_basis(h);
  const float* cw = device_basis(w);
  const Input<float> q(coefficients);
  Output<float> x(tensor);
  const DeviceBuffer<float> v(static_cast<std::size_t>(size));
  // U[i][c] = Σ_j Q[i][j]·C_w[j][c] for every row of every block, in coefficient layout (in x).
  row_major_gemm(false, false, size / w, w, w, 1.0f, q.data(), 0, cw, 0, 0.0f, x.data(), 0, 1);
  // V[r][c] = Σ_i C_h[i][r]·U[i][c] for every block, still in coefficient layout.
  row_major_gemm(true, false, h, w, h, 1.0f, ch, 0, x.data(), h * w, 0.0f, v.data(), h * w, layout.blocks());
  // X: V written back in tensor layout.
  launch("dct_decode_blocks (to tensor layout)", to_tensor_layout, size, offsets_of(layout), size, v.data(),
         x.data());
  x.finish();
}

}  // namespace lowcomm::kernels::cuda_backend
