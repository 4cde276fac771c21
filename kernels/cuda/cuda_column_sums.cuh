#pragma once
// Column sums of an N × C matrix of terms, added onto per-column totals: the parameter gradients
// of layer norm (Σ_n dy·x̂ and Σ_n dy) and the linear layer's bias (Σ_n dout). One thread per
// column summing all N rows in order would be the Reference's bits but leaves a GPU idle (C = 768
// threads, N = B·T steps each); instead, deterministically, in two passes:
//   1. the rows are cut into chunks; a block of kColumns × kRowThreads threads takes kColumns
//      neighbouring columns of one chunk, each thread summing its rows (strided by kRowThreads) in
//      order, then the kRowThreads partial sums of a column are added by a fixed shared-memory
//      tree, and written to a scratch array of chunks × C;
//   2. one thread per column adds its chunks' sums in chunk order onto the column's total.
// The order depends only on N and C, never on scheduling: the same bits run to run, within float
// rounding of the Reference's row-order sum. Included by kernels/cuda/*.cu only.
#include <array>
#include <cstdint>

#include "cuda_memory.cuh"

namespace lowcomm::kernels::cuda_backend {

namespace column_sums_detail {

constexpr int kColumns = 32;    // one warp across neighbouring columns: coalesced row reads
constexpr int kRowThreads = 8;  // kColumns × kRowThreads = kThreads
static_assert(kColumns * kRowThreads == kThreads, "a column-sum block is one launch block");
constexpr std::int64_t kRowsPerChunk = 64;
constexpr std::int64_t kMaxChunks = 4096;

// Pass 1. terms(n, c, out) writes the Sums terms of element (n, c); partials is Sums × chunks × C.
template <int Sums, class Terms>
__global__ void chunk_sums(Terms terms, std::int64_t N, std::int64_t C, std::int64_t rows_per_chunk,
                           std::int64_t chunks, float* partials) {
  __shared__ float shared[Sums][kRowThreads][kColumns];
  const int tx = static_cast<int>(threadIdx.x) % kColumns, ty = static_cast<int>(threadIdx.x) / kColumns;
  const std::int64_t c = static_cast<std::int64_t>(blockIdx.x) * kColumns + tx;
  const std::int64_t chunk = blockIdx.y;
  const std::int64_t first = chunk * rows_per_chunk;
  const std::int64_t last = first + rows_per_chunk < N ? first + rows_per_chunk : N;
  float sum[Sums] = {};
  if (c < C) {
    for (std::int64_t n = first + ty; n < last; n += kRowThreads) {
      float term[Sums];
      terms(n, c, term);
      for (int s = 0; s < Sums; ++s) sum[s] += term[s];
    }
  }
  for (int s = 0; s < Sums; ++s) shared[s][ty][tx] = sum[s];
  __syncthreads();
  for (int stride = kRowThreads / 2; stride > 0; stride /= 2) {
    if (ty < stride) {
      for (int s = 0; s < Sums; ++s) shared[s][ty][tx] += shared[s][ty + stride][tx];
    }
    __syncthreads();
  }
  if (ty == 0 && c < C) {
    for (int s = 0; s < Sums; ++s) partials[(s * chunks + chunk) * C + c] = shared[s][0][tx];
  }
}

// Pass 2: totals[s][c] += Σ_chunk partials[s][chunk][c], chunks in order.
template <int Sums>
__global__ void add_chunk_sums(const float* partials, std::int64_t chunks, std::int64_t C,
                               std::array<float*, Sums> totals) {
  for (std::int64_t c = first_item(); c < C; c += item_stride()) {
    for (int s = 0; s < Sums; ++s) {
      float total = totals[s][c];
      for (std::int64_t chunk = 0; chunk < chunks; ++chunk) total += partials[(s * chunks + chunk) * C + c];
      totals[s][c] = total;
    }
  }
}

}  // namespace column_sums_detail

// totals[s][c] += Σ_n terms(n, c)[s] for every column c < C, on stream(); terms is a device
// functor `void (std::int64_t n, std::int64_t c, float (&out)[Sums])`. totals are device pointers.
template <int Sums, class Terms>
void add_column_sums(const char* name, Terms terms, std::int64_t N, std::int64_t C, std::array<float*, Sums> totals) {
  using namespace column_sums_detail;
  if (N <= 0 || C <= 0) return;
  std::int64_t chunks = (N + kRowsPerChunk - 1) / kRowsPerChunk;
  if (chunks > kMaxChunks) chunks = kMaxChunks;
  const std::int64_t rows_per_chunk = (N + chunks - 1) / chunks;
  chunks = (N + rows_per_chunk - 1) / rows_per_chunk;  // no empty chunk at the end
  DeviceBuffer<float> partials(static_cast<std::size_t>(Sums * chunks * C));
  const dim3 grid(static_cast<unsigned>((C + kColumns - 1) / kColumns), static_cast<unsigned>(chunks));
  chunk_sums<Sums><<<grid, kThreads, 0, stream()>>>(terms, N, C, rows_per_chunk, chunks, partials.data());
  check(cudaGetLastError(), name);
  launch(name, add_chunk_sums<Sums>, C, partials.data(), chunks, C, totals);
}

}  // namespace lowcomm::kernels::cuda_backend
