#pragma once
// Memory that a backend's kernels compute on in place. Host memory for Reference, Cpu and Kokkos;
// CUDA managed memory for Cuda, which the GPU's kernels and host code (the optimiser, the
// collectives, a checkpoint) can both read and write, its pages migrating to whichever touches
// them. A model whose buffers are these keeps its parameters, gradients and activations on the
// GPU between kernels, instead of having every kernel call copy them there and back.
#include <cstddef>
#include <cstdint>
#include <span>

#include "lowcomm/kernels/backend_name.hpp"

namespace lowcomm::kernels {

// `count` zeros of T in a backend's memory: floats (FloatBuffer), or the 16 bits of bf16 or fp16
// values (HalfBuffer, float16.hpp), which a bf16 run keeps at half the memory.
template <class T>
class BackendBuffer {
 public:
  BackendBuffer() = default;
  // `count` zeros in `backend`'s memory, starting on a 256-byte boundary (on a CUDA device,
  // zeroed there, so its pages start on the GPU). Throws lowcomm::Error when the memory cannot be
  // had, saying how much was asked.
  BackendBuffer(Backend backend, std::size_t count);
  BackendBuffer(const BackendBuffer&) = delete;
  BackendBuffer& operator=(const BackendBuffer&) = delete;
  BackendBuffer(BackendBuffer&& other) noexcept;
  BackendBuffer& operator=(BackendBuffer&& other) noexcept;
  ~BackendBuffer();

  T* data() { return data_; }
  const T* data() const { return data_; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  std::span<T> span() { return {data_, size_}; }
  std::span<const T> span() const { return {data_, size_}; }
  operator std::span<T>() { return span(); }
  operator std::span<const T>() const { return span(); }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
  Backend backend_ = Backend::Reference;  // whose allocate() gave data_
};

using FloatBuffer = BackendBuffer<float>;
using HalfBuffer = BackendBuffer<std::uint16_t>;
extern template class BackendBuffer<float>;
extern template class BackendBuffer<std::uint16_t>;

// GB/s (read + write) of one copy of `bytes` within `backend`'s memory, best of five after a
// warm-up, for the benchmarks' "% of copy": memcpy by one host core on the host backends; on Cuda
// a device-to-device cudaMemcpy, the GPU's own memory (HBM) bandwidth.
double measure_copy_bandwidth(Backend backend, std::size_t bytes);

}  // namespace lowcomm::kernels
