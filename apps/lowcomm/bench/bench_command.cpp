// `lowcomm bench`: the benchmark subcommands, each in its own file.
#include "commands.hpp"

namespace lowcomm::cli {

void add_bench_command(CLI::App& app) {
  CLI::App* bench = app.add_subcommand("bench", "Benchmarks");
  bench->require_subcommand(1);
  add_bench_collectives_command(*bench);
  add_bench_compressors_command(*bench);
  add_bench_strategies_command(*bench);
  add_bench_model_command(*bench);
  add_bench_progress_command(*bench);
}

}  // namespace lowcomm::cli
