#include "tensor_buffers.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "lowcomm/error.hpp"

namespace lowcomm::strategy {

TensorBuffers::TensorBuffers(std::span<const TensorInfo> tensors)
    : values_(static_cast<std::size_t>(total_numel(tensors)), 0.0f),
      views_(tensor_views(std::span(values_), tensors)),
      const_views_(views_.begin(), views_.end()) {}

void TensorBuffers::assign(std::span<const std::span<float>> from) {
  if (from.size() != views_.size()) {
    throw Error(fmt::format("expected {} tensors, got {}", views_.size(), from.size()));
  }
  for (std::size_t t = 0; t < from.size(); ++t) {
    if (from[t].size() != views_[t].size()) {
      throw Error(fmt::format("tensor {} holds {} values, expected {}", t, from[t].size(),
                              views_[t].size()));
    }
    std::ranges::copy(from[t], views_[t].begin());
  }
}

void TensorBuffers::load(const StateDict& state, const std::string& key) {
  const std::vector<float>& saved = state.floats(key);
  if (saved.size() != values_.size()) {
    throw Error(fmt::format("state '{}' holds {} values, the model {}", key, saved.size(),
                            values_.size()));
  }
  std::ranges::copy(saved, values_.begin());
}

}  // namespace lowcomm::strategy
