#pragma once
// One flat float buffer holding a value per parameter (a gradient, a momentum, an aggregate),
// with a span per tensor in the model's order: the form Strategy::step and the optimizers take.
// It lives in the memory of the strategy's backend (kernels/memory.hpp: on the GPU for Cuda),
// beside the parameters the kernels update from it.
#include <span>
#include <vector>

#include "lowcomm/core/state_dict.hpp"
#include "lowcomm/kernels/memory.hpp"
#include "lowcomm/compress/unit.hpp"

namespace lowcomm::strategy {

class TensorBuffers {
 public:
  TensorBuffers() = default;
  TensorBuffers(std::span<const TensorInfo> tensors, kernels::Backend backend);  // zero-filled
  // Moves keep the views valid (the buffer moves with them); a copy's views would still point
  // at the original, so there are none.
  TensorBuffers(TensorBuffers&&) noexcept = default;
  TensorBuffers& operator=(TensorBuffers&&) noexcept = default;
  TensorBuffers(const TensorBuffers&) = delete;
  TensorBuffers& operator=(const TensorBuffers&) = delete;

  std::span<const std::span<float>> views() const { return views_; }
  std::span<const std::span<const float>> const_views() const { return const_views_; }
  std::span<float> flat() { return values_.span(); }
  std::span<const float> flat() const { return values_.span(); }

  void save(StateDict& state, const std::string& key) const { state.put(key, values_.span()); }
  // Throws lowcomm::Error naming the key when it is missing or of another size.
  void load(const StateDict& state, const std::string& key);

 private:
  kernels::FloatBuffer values_;
  std::vector<std::span<float>> views_;
  std::vector<std::span<const float>> const_views_;
};

}  // namespace lowcomm::strategy
