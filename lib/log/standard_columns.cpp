// The logs' schemas (DESIGN.md, "Run log (HDF5)"): a training run's and a replay's, which share
// the step traffic columns. Adding a quantity to every training log means adding a Column here
// (and a line in docs/log-format.md); the writer does not change. Times are per step.
#include <fmt/format.h>

#include "lowcomm/error.hpp"
#include "lowcomm/log/run_log.hpp"

namespace lowcomm {

Column per_rank_column(std::string name, ColumnType type, int world_size, std::string unit,
                       std::string description) {
  if (world_size < 1) {
    throw LogError(fmt::format("per_rank_column '{}': world_size is {}; it must be >= 1", name,
                               world_size));
  }
  return Column{std::move(name), type, static_cast<std::size_t>(world_size), std::move(unit),
                std::move(description), true};
}

namespace {

void check_world_size(int world_size, std::string_view schema) {
  if (world_size < 1) {
    throw LogError(fmt::format("{}: world_size is {}; it must be >= 1", schema, world_size));
  }
}

}  // namespace

std::vector<Column> step_traffic_columns(int world_size) {
  check_world_size(world_size, "step_traffic_columns");
  using enum ColumnType;
  return {
      per_rank_column("bytes_sent", Int64, world_size, "bytes", "bytes each rank sent during the step"),
      per_rank_column("bytes_received", Int64, world_size, "bytes", "bytes each rank received during the step"),
      per_rank_column("present", Int64, world_size, "1",
                      "1 where the rank took part in the step's exchanges, 0 where it dropped out "
                      "(cluster.dropout, cluster.rank.*.absent_steps)"),
      {"compress_s", Float64, 1, "s", "time spent compressing and decompressing, on the slowest rank"},
      {"comm_measured_s", Float64, 1, "s", "communication time measured on this machine, on the slowest rank"},
      {"comm_modelled_s", Float64, 1, "s",
       "communication time the network model predicts for the configured bandwidth scenario"},
      {"comm_exposed_s", Float64, 1, "s",
       "communication the simulated clock charges the step: time a rank waited for the network, "
       "on the rank that waited longest"},
      {"comm_hidden_s", Float64, 1, "s",
       "communication the simulated clock hides behind compute (overlap), on the rank of "
       "comm_exposed_s"},
      {"simulated_s", Float64, 1, "s",
       "simulated wall clock at the end of the step: compute and compression as measured, "
       "communication as modelled"},
  };
}

LogSchema training_log_schema(int world_size) {
  check_world_size(world_size, "training_log_schema");
  using enum ColumnType;
  TableSchema steps{
      "steps",
      {
          {"step", Int64, 1, "1", "optimizer step index, starting at 0"},
          {"loss", Float64, 1, "nats", "training loss of the step, averaged over all ranks"},
          {"lr", Float64, 1, "1", "learning rate used by the step"},
          {"tokens", Int64, 1, "tokens", "tokens processed by the step, summed over all ranks"},
          {"compute_s", Float64, 1, "s", "forward and backward time, on the slowest rank"},
          {"grad_norm", Float64, 1, "1", "L2 norm of each rank's local gradient before clipping, averaged over ranks"},
      }};
  const std::vector<Column> traffic = step_traffic_columns(world_size);
  steps.columns.insert(steps.columns.end(), traffic.begin(), traffic.end());
  TableSchema eval{
      "eval",
      {
          {"step", Int64, 1, "1", "optimizer step after which the evaluation ran"},
          {"val_loss", Float64, 1, "nats", "loss on the validation set"},
      }};
  return LogSchema{{std::move(steps), std::move(eval)}, {}};
}

LogSchema replay_log_schema(int world_size, std::span<const TensorInfo> tensors, std::int64_t steps) {
  check_world_size(world_size, "replay_log_schema");
  if (steps < 1) throw LogError(fmt::format("replay_log_schema: {} steps; a replay has at least one", steps));
  using enum ColumnType;
  TableSchema table{
      "steps",
      {
          {"step", Int64, 1, "1", "step of the trace, starting at 0"},
          {"lr", Float64, 1, "1", "learning rate of the step (replay.lr)"},
          per_rank_column("payload_bytes", Int64, world_size, "bytes",
                          "bytes each rank contributed to the collectives (the compressed payloads, before the "
                          "algorithm)"),
          per_rank_column("relative_error", Float64, world_size, "1",
                          "|a - m| / |m|: a, the rank's update (x_before - x_after) / lr; m, the dense mean gradient"),
          per_rank_column("cosine", Float64, world_size, "1", "a.m / (|a| |m|)"),
          per_rank_column("cumulative_relative_error", Float64, world_size, "1",
                          "|sum a - sum m| / |sum m| over the steps so far (skipped steps add nothing)"),
      }};
  const std::vector<Column> traffic = step_traffic_columns(world_size);
  table.columns.insert(table.columns.end(), traffic.begin(), traffic.end());
  LogSchema schema{{std::move(table)}, {}};
  const auto w = static_cast<std::uint64_t>(world_size);
  for (const TensorInfo& tensor : tensors) {
    std::vector<std::uint64_t> shape{static_cast<std::uint64_t>(steps) + 1, w};
    for (const std::int64_t extent : tensor.shape) shape.push_back(static_cast<std::uint64_t>(extent));
    schema.arrays.push_back({"params/" + tensor.name, ArrayType::Float32, std::move(shape), "1",
                             "the tensor on rank w after step s - 1 ([0, w]: the initial values)"});
  }
  schema.arrays.push_back({"dense_bytes_sent", ArrayType::Int64, {w}, "bytes",
                           "bytes rank w would send per step without compression (one fused float32 "
                           "all-reduce by the configured algorithm)"});
  return schema;
}

}  // namespace lowcomm
