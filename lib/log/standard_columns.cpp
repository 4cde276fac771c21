// The columns a training run logs (DESIGN.md, "Run log (HDF5)"). Adding a quantity to every
// training log means adding a Column here (and a line in docs/log-format.md); the writer does
// not change. Times are per step and, unless a description says otherwise, measured on rank 0.
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

LogSchema training_log_schema(int world_size) {
  if (world_size < 1) {
    throw LogError(fmt::format("training_log_schema: world_size is {}; it must be >= 1",
                               world_size));
  }
  using enum ColumnType;
  TableSchema steps{
      "steps",
      {
          {"step", Int64, 1, "1", "optimizer step index, starting at 0"},
          {"loss", Float64, 1, "nats", "training loss of the step, averaged over all ranks"},
          {"lr", Float64, 1, "1", "learning rate used by the step"},
          {"tokens", Int64, 1, "tokens", "tokens processed by the step, summed over all ranks"},
          per_rank_column("bytes_sent", Int64, world_size, "bytes",
                          "bytes each rank sent during the step"),
          per_rank_column("bytes_received", Int64, world_size, "bytes",
                          "bytes each rank received during the step"),
          per_rank_column("present", Int64, world_size, "1",
                          "1 where the rank took part in the step's exchanges, 0 where it dropped out "
                          "(cluster.dropout, cluster.rank.*.absent_steps)"),
          {"compute_s", Float64, 1, "s", "forward and backward time"},
          {"compress_s", Float64, 1, "s", "time spent compressing and decompressing"},
          {"comm_measured_s", Float64, 1, "s", "communication time measured on this machine"},
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
          {"grad_norm", Float64, 1, "1", "L2 norm of each rank's local gradient before clipping, averaged over ranks"},
      }};
  TableSchema eval{
      "eval",
      {
          {"step", Int64, 1, "1", "optimizer step after which the evaluation ran"},
          {"val_loss", Float64, 1, "nats", "loss on the validation set"},
      }};
  return LogSchema{{std::move(steps), std::move(eval)}};
}

}  // namespace lowcomm
