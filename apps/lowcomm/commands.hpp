#pragma once
// Each subcommand of `lowcomm` registers itself on the CLI11 app from its own source file.
#include <CLI/CLI.hpp>

#include "lowcomm/config/config.hpp"

namespace lowcomm::cli {

void add_info_command(CLI::App& app);
void add_bench_command(CLI::App& app);  // bench collectives, bench compressors
void add_bench_collectives_command(CLI::App& bench);
void add_bench_compressors_command(CLI::App& bench);
void add_bench_strategies_command(CLI::App& bench);
void add_bench_model_command(CLI::App& bench);
void add_bench_progress_command(CLI::App& bench);
void add_replay_command(CLI::App& app);
void add_train_command(CLI::App& app);
void add_sweep_command(CLI::App& app);  // no MPI
void add_plan_command(CLI::App& app);   // no MPI
void add_prepare_data_command(CLI::App& app);  // no MPI

// The keys of `lowcomm bench collectives`, `bench compressors` and `bench strategies` besides the
// sections they share with train (for `lowcomm info`).
void add_bench_collectives_keys(ConfigSchema& schema);
void add_bench_compressors_keys(ConfigSchema& schema);
void add_bench_strategies_keys(ConfigSchema& schema);
// The keys of `lowcomm replay` besides the network and compressor keys (replay.*, seed).
void add_replay_keys(ConfigSchema& schema);

}  // namespace lowcomm::cli
