// index_checks on the device: every value one thread, the first culprit's position an atomic
// minimum (FirstPosition); its value is then copied from wherever the values live.
#include "cuda_memory.cuh"

namespace lowcomm::kernels::cuda_backend {

namespace {

template <class T>
__global__ void first_outside_kernel(const T* values, std::int64_t n, std::int64_t limit, unsigned long long* first) {
  for (std::int64_t p = first_item(); p < n; p += item_stride()) {
    const auto value = static_cast<std::int64_t>(values[p]);
    if (value < 0 || value >= limit) record(first, p);
  }
}

template <class T>
FirstOutside first_of(std::span<const T> values, std::int64_t limit) {
  const auto n = static_cast<std::int64_t>(values.size());
  const Input<T> in(values);
  FirstPosition first(n);
  launch("first_outside", first_outside_kernel<T>, n, in.data(), n, limit, first.device());
  const auto position = static_cast<std::size_t>(first.get());  // waits for the kernel
  if (position >= values.size()) return {values.size(), 0};
  T value{};
  check(cudaMemcpy(&value, in.data() + position, sizeof value, cudaMemcpyDefault), "cudaMemcpy (the culprit)");
  return {position, static_cast<std::int64_t>(value)};
}

}  // namespace

FirstOutside first_outside(std::span<const std::int64_t> values, std::int64_t limit) {
  return first_of(values, limit);
}

FirstOutside first_outside_int32(std::span<const std::int32_t> values, std::int64_t limit) {
  return first_of(values, limit);
}

}  // namespace lowcomm::kernels::cuda_backend
