#pragma once
// Each subcommand of `lowcomm` registers itself on the CLI11 app from its own source file.
#include <CLI/CLI.hpp>

namespace lowcomm::cli {

void add_info_command(CLI::App& app);
void add_bench_command(CLI::App& app);

}  // namespace lowcomm::cli
