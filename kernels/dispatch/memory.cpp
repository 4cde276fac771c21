#include "lowcomm/kernels/memory.hpp"

#include <map>
#include <utility>

#include "../backend_scratch.hpp"
#include "dispatch.hpp"

namespace lowcomm::kernels {

template <class T>
BackendBuffer<T>::BackendBuffer(Backend backend, std::size_t count) : size_(count), backend_(backend) {
  if (count == 0) return;
  data_ = static_cast<T*>(LOWCOMM_DISPATCH(backend, allocate, count * sizeof(T)));
}

template <class T>
BackendBuffer<T>::BackendBuffer(BackendBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)), backend_(other.backend_) {}

template <class T>
BackendBuffer<T>& BackendBuffer<T>::operator=(BackendBuffer&& other) noexcept {
  std::swap(data_, other.data_);
  std::swap(size_, other.size_);
  std::swap(backend_, other.backend_);
  return *this;
}

template <class T>
BackendBuffer<T>::~BackendBuffer() {
  if (data_ != nullptr) LOWCOMM_DISPATCH(backend_, release, data_);
}

template class BackendBuffer<float>;
template class BackendBuffer<std::uint16_t>;

double measure_copy_bandwidth(Backend backend, std::size_t bytes) {
  return LOWCOMM_DISPATCH(backend, copy_bandwidth, bytes);
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
