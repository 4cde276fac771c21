// The backends' memory (memory.hpp) and fill (elementwise.hpp) on the host backends: buffers start
// zeroed, move without copying, and fill writes every element, on one thread and several.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <utility>

#include "lowcomm/error.hpp"
#include "lowcomm/kernels/backend.hpp"
#include "lowcomm/kernels/elementwise.hpp"
#include "lowcomm/kernels/memory.hpp"

namespace lowcomm::kernels {
namespace {

TEST(FloatBuffer, StartsZeroedAndMovesWithoutCopying) {
  for (const Backend backend : {Backend::Reference, Backend::Cpu}) {
    for (const std::size_t n : {std::size_t{1}, std::size_t{1000003}}) {
      FloatBuffer buffer(backend, n);
      ASSERT_EQ(buffer.size(), n);
      EXPECT_TRUE(std::all_of(buffer.begin(), buffer.end(), [](float x) { return x == 0.0f; }));
      buffer.data()[n - 1] = 7.0f;
      const float* storage = buffer.data();
      FloatBuffer moved(std::move(buffer));
      EXPECT_EQ(moved.data(), storage);
      EXPECT_EQ(moved.span().back(), 7.0f);
      EXPECT_TRUE(buffer.empty());  // NOLINT(bugprone-use-after-move): the moved-from state is specified
      FloatBuffer assigned;
      assigned = std::move(moved);
      EXPECT_EQ(assigned.data(), storage);
    }
  }
  EXPECT_TRUE(FloatBuffer(Backend::Cpu, 0).empty());
}

TEST(Fill, WritesEveryElementOnEveryThreadCount) {
  for (const int threads : {1, 3}) {
    omp_set_num_threads(threads);
    for (const Backend backend : {Backend::Reference, Backend::Cpu}) {
      FloatBuffer buffer(backend, 1000003);
      fill(backend, buffer, -2.5f);
      EXPECT_TRUE(std::all_of(buffer.begin(), buffer.end(), [](float x) { return x == -2.5f; }));
    }
  }
  std::vector<float> none;
  fill(Backend::Cpu, none, 1.0f);  // empty: nothing to do, no error
  std::vector<float> v(3);
  if (!unavailable_reason(Backend::Kokkos).empty()) {  // a build without Kokkos
    EXPECT_THAT([&] { fill(Backend::Kokkos, v, 1.0f); }, ::testing::ThrowsMessage<Error>(::testing::HasSubstr("fill")));
  }
}

}  // namespace
}  // namespace lowcomm::kernels
