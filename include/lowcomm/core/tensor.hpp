#pragma once
// A named parameter tensor, as every layer sees it (the model's layout, strategies, compressors,
// traces, replay), and views of flat buffers that hold tensors back to back.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace lowcomm {

struct TensorInfo {
  std::string name;
  std::vector<std::int64_t> shape;  // empty for a scalar
  std::int64_t numel() const;
};

// The number of elements of a tensor of this shape (1 for a scalar).
std::int64_t numel_of(std::span<const std::int64_t> shape);
// The elements of all of them together.
std::int64_t total_numel(std::span<const TensorInfo> tensors);

namespace core_detail {
[[noreturn]] void wrong_flat_size(std::size_t flat, std::int64_t needed, std::size_t tensors);
}

// One view per tensor into `flat`, which holds the tensors back to back in this order. Throws
// lowcomm::Error when flat's size is not the tensors' total.
template <class T>
std::vector<std::span<T>> tensor_views(std::span<T> flat, std::span<const TensorInfo> tensors) {
  const std::int64_t total = total_numel(tensors);
  if (flat.size() != static_cast<std::size_t>(total)) core_detail::wrong_flat_size(flat.size(), total, tensors.size());
  std::vector<std::span<T>> views;
  views.reserve(tensors.size());
  std::size_t offset = 0;
  for (const TensorInfo& t : tensors) {
    const auto n = static_cast<std::size_t>(t.numel());
    views.push_back(flat.subspan(offset, n));
    offset += n;
  }
  return views;
}

// The views as runs of neighbours: the [first, last) ranges of `views` whose spans lie back to
// back in memory (each starting where the one before it ends), in order and covering every view.
// An element-wise kernel can then take a run in one call: the tensors of one flat buffer (a
// model's parameters or gradients) are one run, which on a GPU is one launch instead of one per
// tensor.
template <class T>
std::vector<std::pair<std::size_t, std::size_t>> contiguous_runs(std::span<const std::span<T>> views) {
  std::vector<std::pair<std::size_t, std::size_t>> runs;
  for (std::size_t i = 0; i < views.size(); ++i) {
    if (!runs.empty() && views[i - 1].data() + views[i - 1].size() == views[i].data()) {
      runs.back().second = i + 1;
    } else {
      runs.emplace_back(i, i + 1);
    }
  }
  return runs;
}

// views[first] … views[last − 1] as one span, for a run of contiguous_runs (first < last).
template <class T>
std::span<T> joined(std::span<const std::span<T>> views, std::size_t first, std::size_t last) {
  return {views[first].data(), static_cast<std::size_t>(views[last - 1].data() + views[last - 1].size() -
                                                        views[first].data())};
}

}  // namespace lowcomm
