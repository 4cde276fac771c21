#include "tensor_buffers.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "lowcomm/error.hpp"

namespace lowcomm::strategy {

TensorBuffers::TensorBuffers(std::span<const TensorInfo> tensors, kernels::Backend backend)
    : values_(backend, static_cast<std::size_t>(total_numel(tensors))),
      views_(tensor_views(values_.span(), tensors)),
      const_views_(views_.begin(), views_.end()) {}

void TensorBuffers::load(const StateDict& state, const std::string& key) {
  const std::vector<float>& saved = state.floats(key);
  if (saved.size() != values_.size()) {
    throw Error(fmt::format("state '{}' holds {} values, the model {}", key, saved.size(),
                            values_.size()));
  }
  std::ranges::copy(saved, values_.begin());
}

}  // namespace lowcomm::strategy
