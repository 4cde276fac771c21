#include "lowcomm/kernels/memory.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>
#include <vector>
#include <map>
#include <new>
#include <type_traits>
#include <utility>

#include <fmt/format.h>

#include "backend_scratch.hpp"
#include "lowcomm/error.hpp"
#include "lowcomm/kernels/elementwise.hpp"
#if LOWCOMM_HAVE_CUDA
#include "../cuda/cuda_backend.hpp"
#endif

namespace lowcomm::kernels {

namespace {

// Host buffers start on a 256-byte boundary, as cudaMallocManaged's do: whole cache lines and
// vector widths for every kernel, on every backend alike.
constexpr std::align_val_t kAlignment{256};

}  // namespace

template <class T>
BackendBuffer<T>::BackendBuffer(Backend backend, std::size_t count) : size_(count) {
  if (count == 0) return;
#if LOWCOMM_HAVE_CUDA
  if (backend == Backend::Cuda) {
    data_ = static_cast<T*>(cuda_backend::allocate_managed(count * sizeof(T)));  // zeroed on the device
    managed_ = true;
    return;
  }
#endif
  data_ = new (kAlignment, std::nothrow) T[count];
  if (data_ == nullptr) {
    throw Error(fmt::format("out of host memory: {} values of {} bytes ({:.2f} GiB) for a {} buffer", count, sizeof(T),
                            static_cast<double>(count * sizeof(T)) / (1024.0 * 1024.0 * 1024.0),
                            to_string(backend)));
  }
  if constexpr (std::is_same_v<T, float>) {
    // Zeroed by the backend's own loop: on Cpu, threads first-touch the pages they later write.
    fill(backend == Backend::Reference ? Backend::Reference : Backend::Cpu, span(), 0.0f);
  } else {
    // Zeroed as the Cpu kernels will write it, threads first-touching their pages.
    const auto n = static_cast<std::int64_t>(count);
    T* const values = data_;
#pragma omp parallel for schedule(static) if (backend == Backend::Cpu && n > (std::int64_t{1} << 16))
    for (std::int64_t i = 0; i < n; ++i) values[i] = T{};
  }
}

template <class T>
BackendBuffer<T>::BackendBuffer(BackendBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)),
      managed_(std::exchange(other.managed_, false)) {}

template <class T>
BackendBuffer<T>& BackendBuffer<T>::operator=(BackendBuffer&& other) noexcept {
  std::swap(data_, other.data_);
  std::swap(size_, other.size_);
  std::swap(managed_, other.managed_);
  return *this;
}

template <class T>
BackendBuffer<T>::~BackendBuffer() {
  if (data_ == nullptr) return;
#if LOWCOMM_HAVE_CUDA
  if (managed_) {
    cuda_backend::free_managed(data_);
    return;
  }
#endif
  ::operator delete[](data_, kAlignment);
}

template class BackendBuffer<float>;
template class BackendBuffer<std::uint16_t>;

double measure_copy_bandwidth(Backend backend, std::size_t bytes) {
#if LOWCOMM_HAVE_CUDA
  if (backend == Backend::Cuda) return cuda_backend::copy_bandwidth(bytes);
#endif
  (void)backend;
  std::vector<char> from(bytes, 1), to(bytes, 0);
  double best = std::numeric_limits<double>::infinity();
  for (int i = 0; i < 6; ++i) {  // the first warms up; the best of the other five
    const auto start = std::chrono::steady_clock::now();
    std::memcpy(to.data(), from.data(), bytes);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    from[static_cast<std::size_t>(i) % bytes] = to[bytes - 1 - static_cast<std::size_t>(i) % bytes];  // keep both live
    if (i > 0) best = std::min(best, seconds);
  }
  return 2.0 * static_cast<double>(bytes) / best / 1e9;
}

namespace detail {

std::span<float> backend_scratch(Backend backend, std::size_t count) {
  thread_local std::map<Backend, FloatBuffer> buffers;
  FloatBuffer& buffer = buffers[backend];
  if (buffer.size() < count) buffer = FloatBuffer(backend, count);
  return buffer.span().first(count);
}

}  // namespace detail

}  // namespace lowcomm::kernels
