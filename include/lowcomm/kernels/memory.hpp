#pragma once
// Memory that a backend's kernels compute on in place. Host memory for Reference, Cpu and Kokkos;
// CUDA managed memory for Cuda, which the GPU's kernels and host code (the optimiser, the
// collectives, a checkpoint) can both read and write, its pages migrating to whichever touches
// them. A model whose buffers are these keeps its parameters, gradients and activations on the
// GPU between kernels, instead of having every kernel call copy them there and back.
#include <cstddef>
#include <span>

#include "lowcomm/kernels/backend.hpp"

namespace lowcomm::kernels {

class FloatBuffer {
 public:
  FloatBuffer() = default;
  // `count` zeros in `backend`'s memory, starting on a 256-byte boundary (on a CUDA device,
  // zeroed there, so its pages start on the GPU). Throws lowcomm::Error when the memory cannot be
  // had, saying how much was asked.
  FloatBuffer(Backend backend, std::size_t count);
  FloatBuffer(const FloatBuffer&) = delete;
  FloatBuffer& operator=(const FloatBuffer&) = delete;
  FloatBuffer(FloatBuffer&& other) noexcept;
  FloatBuffer& operator=(FloatBuffer&& other) noexcept;
  ~FloatBuffer();

  float* data() { return data_; }
  const float* data() const { return data_; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  std::span<float> span() { return {data_, size_}; }
  std::span<const float> span() const { return {data_, size_}; }
  operator std::span<float>() { return span(); }
  operator std::span<const float>() const { return span(); }
  float* begin() { return data_; }
  float* end() { return data_ + size_; }
  const float* begin() const { return data_; }
  const float* end() const { return data_ + size_; }

 private:
  float* data_ = nullptr;
  std::size_t size_ = 0;
  bool managed_ = false;  // CUDA managed memory rather than the host heap
};

// GB/s (read + write) of one copy of `bytes` within `backend`'s memory, best of five after a
// warm-up, for the benchmarks' "% of copy": memcpy by one host core on the host backends; on Cuda
// a device-to-device cudaMemcpy, the GPU's own memory (HBM) bandwidth.
double measure_copy_bandwidth(Backend backend, std::size_t bytes);

}  // namespace lowcomm::kernels
