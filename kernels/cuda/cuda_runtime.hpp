#pragma once
// The host side of kernels/cuda, free of device code so that plain C++ (runtime.cpp) compiles it
// too: error checks, the device and stream of this process, device memory, host spans staged to
// the device, and the first-position result of the data-dependent checks. Device code includes
// cuda_memory.cuh, which adds the launch helpers.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>
#include <utility>

#include "cuda_backend.hpp"

namespace lowcomm::kernels::cuda_backend {

// Throws lowcomm::Error "CUDA: <what> failed: <error name>: <description>" unless status is
// cudaSuccess.
void check(cudaError_t status, const char* what);

// The stream every kernel of this backend runs on. Each call makes this process's device (local
// rank modulo visible devices) the calling thread's current one, so that work queued next goes
// there whatever the thread did before; throws lowcomm::Error with unavailable_reason() when no
// device is usable.
cudaStream_t stream();

// Waits for everything queued on stream(), then reports any error a kernel raised.
void synchronize(const char* what);

// Whether kernels can read `pointer` in place: device or managed memory. Host memory, pinned or
// not, is staged instead. Selects the device first (stream()), so that the runtime's context is
// made on this process's device and not on device 0.
bool device_accessible(const void* pointer);

// `count` elements of T on the device, from the stream-ordered pool (cudaMallocAsync), freed on
// the stream when destroyed. Contents are uninitialised.
template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t count) : size_(count) {
    if (count > 0) {
      stream_ = stream();
      void* memory = nullptr;
      check(cudaMallocAsync(&memory, count * sizeof(T), stream_), "cudaMallocAsync");
      data_ = static_cast<T*>(memory);
    }
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)),
        stream_(std::exchange(other.stream_, nullptr)) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
    std::swap(stream_, other.stream_);
    return *this;
  }
  // On the stream it was allocated on, kept from then: a destructor must not throw, and stream()
  // may.
  ~DeviceBuffer() {
    if (data_ != nullptr) cudaFreeAsync(data_, stream_);
  }
  T* data() const { return data_; }
  std::size_t size() const { return size_; }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
  cudaStream_t stream_ = nullptr;
};

// A span's elements where kernels can read them: the span itself when it is device memory,
// otherwise a device copy made now.
template <class T>
class Input {
 public:
  explicit Input(std::span<const T> span) : data_(span.data()) {
    if (span.empty() || device_accessible(span.data())) return;
    copy_ = DeviceBuffer<T>(span.size());
    check(cudaMemcpyAsync(copy_.data(), span.data(), span.size_bytes(), cudaMemcpyHostToDevice, stream()),
          "cudaMemcpyAsync (input to the device)");
    data_ = copy_.data();
  }
  const T* data() const { return data_; }

 private:
  DeviceBuffer<T> copy_;
  const T* data_;
};

// A span kernels write: the span itself when it is device memory, otherwise a device buffer that
// finish() copies back. With `initialised`, the buffer starts with the span's values (kernels
// that update in place). finish() must be called once the kernels are queued; it waits for them.
template <class T>
class Output {
 public:
  explicit Output(std::span<T> span, bool initialised = false) : span_(span), data_(span.data()) {
    if (span.empty() || device_accessible(span.data())) return;
    copy_ = DeviceBuffer<T>(span.size());
    data_ = copy_.data();
    if (initialised) {
      check(cudaMemcpyAsync(data_, span.data(), span.size_bytes(), cudaMemcpyHostToDevice, stream()),
            "cudaMemcpyAsync (output to the device)");
    }
  }
  T* data() const { return data_; }
  void finish() {
    if (copy_.data() != nullptr) {
      check(cudaMemcpyAsync(span_.data(), copy_.data(), span_.size_bytes(), cudaMemcpyDeviceToHost, stream()),
            "cudaMemcpyAsync (output to the host)");
    }
    synchronize("a kernel");
  }

 private:
  std::span<T> span_;
  DeviceBuffer<T> copy_;
  T* data_;
};

// Bytes as unsigned char, the type the kernels index.
inline std::span<const unsigned char> as_uchars(std::span<const std::byte> bytes) {
  return {reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size()};
}
inline std::span<unsigned char> as_uchars(std::span<std::byte> bytes) {
  return {reinterpret_cast<unsigned char*>(bytes.data()), bytes.size()};
}

// The smallest position a kernel reports (cuda_memory.cuh's record(), an atomicMin), `none` when
// none does: the first NaN, the first index out of range. get() waits for the stream.
class FirstPosition {
 public:
  explicit FirstPosition(std::int64_t none);
  unsigned long long* device() const { return value_.data(); }
  std::int64_t get();

 private:
  DeviceBuffer<unsigned long long> value_;
};
}  // namespace lowcomm::kernels::cuda_backend
