// core/tensor.hpp: element counts, views of a flat buffer, and the runs of back-to-back views
// that element-wise kernels take in one call.
#include "lowcomm/core/tensor.hpp"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "lowcomm/error.hpp"

namespace lowcomm {
namespace {

using Runs = std::vector<std::pair<std::size_t, std::size_t>>;

TEST(Tensor, ViewsOfAFlatBufferAreOneRun) {
  const std::vector<TensorInfo> tensors = {{"w", {3, 4}}, {"b", {4}}, {"s", {}}};
  EXPECT_EQ(total_numel(tensors), 17);
  std::vector<float> flat(17);
  const std::vector<std::span<float>> views = tensor_views(std::span(flat), tensors);
  ASSERT_EQ(views.size(), 3u);
  EXPECT_EQ(views[2].size(), 1u);
  EXPECT_EQ(contiguous_runs(std::span<const std::span<float>>(views)), (Runs{{0, 3}}));
  const std::span<float> all = joined(std::span<const std::span<float>>(views), 0, 3);
  EXPECT_EQ(all.data(), flat.data());
  EXPECT_EQ(all.size(), flat.size());
  std::vector<float> short_buffer(16);
  EXPECT_THROW(tensor_views(std::span(short_buffer), tensors), Error);
}

TEST(Tensor, RunsBreakWhereAViewDoesNotStartAtTheEndOfTheOneBefore) {
  std::vector<float> a(10), b(4);
  const std::vector<std::span<const float>> views = {
      std::span<const float>(a).first(3), std::span<const float>(a).subspan(3, 2),  // back to back
      std::span<const float>(b),                                                     // elsewhere
      std::span<const float>(a).subspan(6, 4)};                                      // a gap of one
  EXPECT_EQ(contiguous_runs(std::span<const std::span<const float>>(views)), (Runs{{0, 2}, {2, 3}, {3, 4}}));
  const std::span<const float> first = joined(std::span<const std::span<const float>>(views), 0, 2);
  EXPECT_EQ(first.data(), a.data());
  EXPECT_EQ(first.size(), 5u);
  EXPECT_TRUE(contiguous_runs(std::span<const std::span<const float>>()).empty());
}

}  // namespace
}  // namespace lowcomm
