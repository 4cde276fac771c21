#pragma once
// Host spans as Kokkos views in the default execution space's memory (kernels/kokkos only).
// In a space that reads host memory (Serial, OpenMP, Threads) a view wraps the span itself;
// elsewhere an input is copied to the device when made and an output copied back by
// Output::finish().
#include <Kokkos_Core.hpp>

#include <cstdint>
#include <cstring>
#include <span>
#include <type_traits>

#include "kokkos_backend.hpp"

namespace lowcomm::kernels::kokkos_backend {

using ExecutionSpace = Kokkos::DefaultExecutionSpace;
using MemorySpace = ExecutionSpace::memory_space;
using Range = Kokkos::RangePolicy<ExecutionSpace, Kokkos::IndexType<std::int64_t>>;

template <class T>
using HostView = Kokkos::View<T*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

template <class T>
using DeviceView = Kokkos::View<T*, MemorySpace>;

// A read-only view of `span` in MemorySpace.
template <class T>
auto input(std::span<const T> span) {
  ensure_initialized();
  const HostView<const T> host(span.data(), span.size());
  return Kokkos::create_mirror_view_and_copy(MemorySpace(), host);
}

// A writable view of `span` in MemorySpace; finish() makes the span hold what was written. With
// `initialised`, the view starts with the span's values (for kernels that update in place).
template <class T>
class Output {
 public:
  explicit Output(std::span<T> span, bool initialised = false)
      : host_((ensure_initialized(), span.data()), span.size()),  // Kokkos runs before any view exists
        device_(initialised ? Kokkos::create_mirror_view_and_copy(MemorySpace(), host_)
                            : Kokkos::create_mirror_view(MemorySpace(), host_)) {}
  const auto& view() const { return device_; }
  void finish() {
    ExecutionSpace().fence();
    Kokkos::deep_copy(host_, device_);
  }

 private:
  HostView<T> host_;
  decltype(Kokkos::create_mirror_view(MemorySpace(), std::declval<HostView<T>&>())) device_;
};

// Bytes as unsigned char, a type every Kokkos version stores in views.
inline std::span<const unsigned char> as_uchars(std::span<const std::byte> bytes) {
  return {reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size()};
}
inline std::span<unsigned char> as_uchars(std::span<std::byte> bytes) {
  return {reinterpret_cast<unsigned char*>(bytes.data()), bytes.size()};
}

// Kokkos lambdas must not capture the enclosing object or host-only types: these small
// functions stand in for std::min / std::max, which are not device functions everywhere.
template <class T>
KOKKOS_INLINE_FUNCTION T smaller(T a, T b) { return b < a ? b : a; }
template <class T>
KOKKOS_INLINE_FUNCTION T larger(T a, T b) { return a < b ? b : a; }

// A float's bits (std::bit_cast is not a device function everywhere; memcpy is).
KOKKOS_INLINE_FUNCTION std::uint32_t bits_of(float v) {
  std::uint32_t bits = 0;
  std::memcpy(&bits, &v, sizeof bits);
  return bits;
}

}  // namespace lowcomm::kernels::kokkos_backend
