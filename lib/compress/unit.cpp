#include "lowcomm/compress/unit.hpp"

#include <functional>
#include <numeric>

namespace lowcomm {

namespace {
std::int64_t product(std::span<const std::int64_t> shape) {
  return std::accumulate(shape.begin(), shape.end(), std::int64_t{1}, std::multiplies<>());
}
}  // namespace

std::int64_t TensorInfo::numel() const { return product(shape); }
std::int64_t UnitContext::numel() const { return product(shape); }

}  // namespace lowcomm
