// The residual add (residual.hpp) on the GPU: one element per thread, out[i] = a[i] + b[i]. One
// IEEE add per element, as the Reference's loop, so the bits are the Reference's. out may alias a
// or b: each element is read and then written by the same thread, and nowhere else.
#include <cstdint>
#include <span>

#include "cuda_memory.cuh"
#include "cuda_backend.hpp"

namespace lowcomm::kernels::cuda_backend {

namespace {

// No __restrict__: out may be a or b.
__global__ void add_elements(const float* a, const float* b, std::int64_t count, float* out) {
  for (std::int64_t i = first_item(); i < count; i += item_stride()) out[i] = a[i] + b[i];
}

}  // namespace

void residual_add(std::span<float> out, std::span<const float> a, std::span<const float> b) {
  const auto count = static_cast<std::int64_t>(out.size());
  const Input<float> first(a);
  const Input<float> second(b);
  // Every element is overwritten, so a host `out` is not copied in (even when it is a or b: the
  // inputs above are then their own device copies).
  Output<float> sum(out);
  launch("residual_add", add_elements, count, first.data(), second.data(), count, sum.data());
  sum.finish();
}

}  // namespace lowcomm::kernels::cuda_backend
