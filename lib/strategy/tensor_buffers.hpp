#pragma once
// One flat float buffer holding a value per parameter (a gradient, a momentum, an anchor copy),
// with a span per tensor in the model's order: the form Strategy::step and the optimizers take.
#include <span>
#include <vector>

#include "lowcomm/core/state_dict.hpp"
#include "lowcomm/compress/unit.hpp"

namespace lowcomm::strategy {

class TensorBuffers {
 public:
  TensorBuffers() = default;
  explicit TensorBuffers(std::span<const TensorInfo> tensors);  // zero-filled
  // Moves keep the views valid (the buffer moves with them); a copy's views would still point
  // at the original, so there are none.
  TensorBuffers(TensorBuffers&&) noexcept = default;
  TensorBuffers& operator=(TensorBuffers&&) noexcept = default;
  TensorBuffers(const TensorBuffers&) = delete;
  TensorBuffers& operator=(const TensorBuffers&) = delete;

  std::span<const std::span<float>> views() const { return views_; }
  std::span<const std::span<const float>> const_views() const { return const_views_; }
  std::span<float> flat() { return values_; }
  std::span<const float> flat() const { return values_; }

  // Copies every tensor of `from` (same sizes) into this buffer.
  void assign(std::span<const std::span<float>> from);
  void save(StateDict& state, const std::string& key) const { state.put(key, values_); }
  // Throws lowcomm::Error naming the key when it is missing or of another size.
  void load(const StateDict& state, const std::string& key);

 private:
  std::vector<float> values_;
  std::vector<std::span<float>> views_;
  std::vector<std::span<const float>> const_views_;
};

}  // namespace lowcomm::strategy
