// GradientTraceWriter writes what GradientTraceReader reads back: tensors in sorted name order
// whatever the writer's order, scalars, one [step, rank] slice at a time, and clear errors for
// slices outside the trace. (Traces written by h5py, and the reader's errors on malformed files,
// are tested through `lowcomm replay` in CMakeLists.txt.)
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "../log/temp_folder.hpp"
#include "lowcomm/log/gradient_trace.hpp"

namespace lowcomm {
namespace {

using test::TempFolder;

// A value that names its tensor, step, rank and element, so a misplaced slice shows.
float value(std::size_t tensor, std::int64_t step, int rank, std::size_t i) {
  return static_cast<float>(tensor * 1000 + step * 100 + rank * 10) + static_cast<float>(i) / 64;
}

TEST(GradientTrace, WriterAndReaderAgree) {
  const TempFolder folder;
  const auto file = folder / "trace.h5";
  const int world = 3;
  const std::vector<TensorInfo> tensors{{"w", {2, 3}}, {"b", {4}}, {"s", {}}};  // unsorted
  std::vector<std::vector<float>> initial;
  for (const TensorInfo& t : tensors) {
    initial.emplace_back(static_cast<std::size_t>(t.numel()));
    std::iota(initial.back().begin(), initial.back().end(), static_cast<float>(initial.size()));
  }
  {
    const std::vector<std::span<const float>> init(initial.begin(), initial.end());
    GradientTraceWriter writer(file, world, tensors, init);
    for (std::int64_t step = 0; step < 2; ++step) {
      EXPECT_EQ(writer.add_step(), step);
      for (int rank = world - 1; rank >= 0; --rank) {  // any order
        std::vector<std::vector<float>> grads;
        for (std::size_t t = 0; t < tensors.size(); ++t) {
          grads.emplace_back(static_cast<std::size_t>(tensors[t].numel()));
          for (std::size_t i = 0; i < grads.back().size(); ++i) {
            grads.back()[i] = value(t, step, rank, i);
          }
        }
        const std::vector<std::span<const float>> spans(grads.begin(), grads.end());
        writer.write_gradients(step, rank, spans);
      }
    }
    EXPECT_THROW(writer.write_gradients(2, 0, {}), TraceError);
    writer.close();
  }

  const GradientTraceReader reader(file);
  EXPECT_EQ(reader.world_size(), world);
  EXPECT_EQ(reader.steps(), 2);
  ASSERT_EQ(reader.tensors().size(), 3u);
  const std::vector<std::size_t> written_index{1, 2, 0};  // b, s, w in the writer's order
  for (std::size_t t = 0; t < 3; ++t) {
    const TensorInfo& expected = tensors[written_index[t]];
    EXPECT_EQ(reader.tensors()[t].name, expected.name);
    EXPECT_EQ(reader.tensors()[t].shape, expected.shape);
    std::vector<float> values(static_cast<std::size_t>(expected.numel()));
    reader.read_initial_values(t, values);
    EXPECT_EQ(values, initial[written_index[t]]);
  }
  for (std::int64_t step = 0; step < 2; ++step) {
    for (int rank = 0; rank < world; ++rank) {
      std::vector<std::vector<float>> grads;
      for (const TensorInfo& t : reader.tensors()) {
        grads.emplace_back(static_cast<std::size_t>(t.numel()));
      }
      const std::vector<std::span<float>> spans(grads.begin(), grads.end());
      reader.read_gradients(step, rank, spans);
      for (std::size_t t = 0; t < 3; ++t) {
        for (std::size_t i = 0; i < grads[t].size(); ++i) {
          ASSERT_EQ(grads[t][i], value(written_index[t], step, rank, i)) << t << " " << i;
        }
      }
    }
  }
  std::vector<std::vector<float>> grads{std::vector<float>(4), std::vector<float>(1),
                                        std::vector<float>(6)};
  const std::vector<std::span<float>> spans(grads.begin(), grads.end());
  EXPECT_THROW(reader.read_gradients(2, 0, spans), TraceError);
  EXPECT_THROW(reader.read_gradients(0, 3, spans), TraceError);
  EXPECT_THROW(reader.read_gradients(0, 0, std::span(spans).first(2)), TraceError);
}

TEST(GradientTrace, WriterRejectsBadTensors) {
  const TempFolder folder;
  const std::vector<float> one{1.0f};
  const std::vector<std::span<const float>> init{one, one};
  EXPECT_THROW(GradientTraceWriter(folder / "a.h5", 1, {{"x", {}}, {"x", {}}}, init), TraceError);
  EXPECT_THROW(GradientTraceWriter(folder / "b.h5", 1, {{"a/b", {}}, {"c", {}}}, init), TraceError);
  EXPECT_THROW(GradientTraceWriter(folder / "c.h5", 1, {{"x", {2}}, {"y", {}}}, init), TraceError);
  EXPECT_THROW(GradientTraceWriter(folder / "d.h5", 0, {{"x", {}}, {"y", {}}}, init), TraceError);
}

TEST(GradientTrace, ReaderNamesAMissingFile) {
  const TempFolder folder;
  try {
    GradientTraceReader reader(folder / "nope.h5");
    FAIL() << "no error";
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("nope.h5: no such file"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace lowcomm
