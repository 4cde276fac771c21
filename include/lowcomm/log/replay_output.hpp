#pragma once
// The file `lowcomm replay` writes (docs/replay.md): the parameters on every rank after every
// step, the bytes each rank sent and received, and how far the aggregate is from the dense mean.
// It is written to OUT.partial and renamed to OUT only by commit(), so a file named OUT is always
// a finished replay; an output destroyed uncommitted removes its partial file.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "lowcomm/log/gradient_trace.hpp"

namespace lowcomm {

// What one rank contributes to one row of the output besides its parameters. Plain data: the
// replay gathers it from every rank as bytes.
struct RankStep {
  std::int64_t bytes_sent = 0;
  std::int64_t bytes_received = 0;
  std::int64_t payload_bytes = 0;
  double relative_error = 0;
  double cosine = 0;
  double cumulative_relative_error = 0;  // of the updates so far against the dense means so far
  double measured_comm_s = 0;
  double modelled_comm_s = 0;
  double codec_s = 0;
};

// The root attributes the replay itself knows (the rest come from the build and the shapes).
struct ReplayOutputMetadata {
  std::string config;      // the effective configuration, as TOML
  std::string trace;       // absolute path of the trace replayed
  std::string strategy;
  std::string compressor;
  std::string network;     // describe_network() of the configuration
  std::int64_t seed = 0;
  double lr = 0;
  std::vector<std::int64_t> dense_bytes_sent;  // per rank and step with compressor none
};

class ReplayOutput {
 public:
  // Creates OUT.partial (truncating one left by an earlier run) with every dataset sized for
  // `steps` steps of `world_size` ranks and all root attributes written. Throws LogError when the
  // file cannot be created or written.
  ReplayOutput(const std::filesystem::path& out, const std::vector<TensorInfo>& tensors,
               int world_size, std::int64_t steps, const ReplayOutputMetadata& metadata);
  ~ReplayOutput();  // removes OUT.partial unless committed
  ReplayOutput(const ReplayOutput&) = delete;
  ReplayOutput& operator=(const ReplayOutput&) = delete;

  // Rank `rank`'s parameters after `row` steps (row 0: the initial values), all tensors
  // concatenated in the order given to the constructor.
  void write_params(std::int64_t row, int rank, std::span<const float> flat);

  // One step's values of every rank, in rank order.
  void write_step(std::int64_t step, std::span<const RankStep> ranks);

  // Closes the file, checking that its last writes succeeded, and renames it to OUT. Throws
  // LogError when they failed, Error when the rename does.
  void commit();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace lowcomm
