#include "lowcomm/core/tensor.hpp"

#include <fmt/format.h>

#include <functional>
#include <numeric>

#include "lowcomm/error.hpp"

namespace lowcomm {

std::int64_t numel_of(std::span<const std::int64_t> shape) {
  return std::accumulate(shape.begin(), shape.end(), std::int64_t{1}, std::multiplies<>());
}

std::int64_t TensorInfo::numel() const { return numel_of(shape); }

std::int64_t total_numel(std::span<const TensorInfo> tensors) {
  std::int64_t total = 0;
  for (const TensorInfo& t : tensors) total += t.numel();
  return total;
}

void core_detail::wrong_flat_size(std::size_t flat, std::int64_t needed, std::size_t tensors) {
  throw Error(fmt::format("a flat buffer of {} values cannot hold the {} tensors' {} values", flat, tensors, needed));
}

}  // namespace lowcomm
