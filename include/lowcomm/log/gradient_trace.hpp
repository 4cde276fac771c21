#pragma once
// Gradient traces: the gradients every rank saw at every step of a run, recorded once so that
// `lowcomm replay` can push them through any compressor offline. The file is plain HDF5
// (docs/replay.md):
//   /params/<name>   the initial values, float32, shape = the tensor's shape ([] for a scalar)
//   /grads/<name>    float32 [steps, world_size, *shape]: rank w's gradient at each step
//   attribute world_size (integer) on the root group
// Tensors are the datasets directly under /params, in byte-wise sorted name order; that order
// is the order of tensors() here, and so of the compressor's unit ids in a replay.
//
// The reader reads one [step, rank] slice at a time, so a rank of a replay holds one step of its
// own gradients, never the whole trace. The writer is for the training app: rank 0 adds a step
// and writes each rank's slice as it arrives.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "lowcomm/core/tensor.hpp"
#include "lowcomm/error.hpp"

namespace lowcomm {

// A trace is missing, unreadable or malformed; the message names the file, the dataset and
// what the layout should be.
class TraceError : public Error {
 public:
  using Error::Error;
};

class GradientTraceReader {
 public:
  // Opens the trace and checks its whole layout (every /params/<name> has a /grads/<name> of
  // shape [steps, world_size, *shape], the same steps everywhere, floating-point data, a
  // world_size attribute). Throws TraceError otherwise.
  explicit GradientTraceReader(const std::filesystem::path& file);
  ~GradientTraceReader();
  GradientTraceReader(GradientTraceReader&&) noexcept;
  GradientTraceReader& operator=(GradientTraceReader&&) noexcept;

  const std::filesystem::path& path() const;
  int world_size() const;
  std::int64_t steps() const;
  const std::vector<TensorInfo>& tensors() const;  // sorted by name

  // tensors()[tensor]'s initial values; out.size() must be its numel(). Data stored as float64
  // (or any other floating type) is converted to float32.
  void read_initial_values(std::size_t tensor, std::span<float> out) const;

  // Rank `rank`'s gradients at `step`, one span per tensor in tensors() order, each of numel()
  // values. Reads only that [step, rank] slice of each /grads dataset.
  void read_gradients(std::int64_t step, int rank, std::span<const std::span<float>> out) const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

class GradientTraceWriter {
 public:
  // Creates (or truncates) `file` with the initial values (initial_values[t] holds tensors[t]'s
  // numel() values) and empty /grads datasets that grow one step at a time. Names must be
  // unique, non-empty and without '/'; tensors may come in any order (readers sort them).
  // Throws TraceError.
  GradientTraceWriter(const std::filesystem::path& file, int world_size,
                      std::vector<TensorInfo> tensors,
                      std::span<const std::span<const float>> initial_values);
  ~GradientTraceWriter();  // closes; a failure there is lost: call close() to see it
  GradientTraceWriter(GradientTraceWriter&&) noexcept;
  GradientTraceWriter& operator=(GradientTraceWriter&&) noexcept;

  // Adds step steps() to every /grads dataset (zeros until written) and returns its index.
  std::int64_t add_step();
  // Writes rank `rank`'s gradients of step `step` (< steps()), one span per tensor in the order
  // given to the constructor.
  void write_gradients(std::int64_t step, int rank,
                       std::span<const std::span<const float>> gradients);
  std::int64_t steps() const;
  // Flushes and closes the file; throws TraceError when the last writes fail.
  void close();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace lowcomm
