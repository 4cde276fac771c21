// lowcomm: one executable, subcommands for each job (see `lowcomm --help`).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "commands.hpp"
#include "lowcomm/build_info.hpp"
#include "lowcomm/config/nearest_name.hpp"
#include "common/heap_policy.hpp"
#include "common/mpi_session.hpp"
#include "common/plugins.hpp"

namespace {

// "lowcomm: 'trian' is not a subcommand; did you mean 'train'?": the first word that names no
// subcommand where one is expected (CLI11 itself says only that one is required), or nullopt.
std::optional<std::string> unknown_subcommand(CLI::App& app, int argc, char** argv) {
  CLI::App* command = &app;
  std::string path = "lowcomm";
  for (int i = 1; i < argc; ++i) {
    const std::string_view word = argv[i];
    if (word.starts_with("-")) {
      if (word == "--plugin") ++i;  // its value
      continue;
    }
    const std::vector<CLI::App*> subcommands = command->get_subcommands([](CLI::App*) { return true; });
    if (subcommands.empty()) return std::nullopt;  // the command's own arguments begin
    const auto named = std::find_if(subcommands.begin(), subcommands.end(),
                                    [&](const CLI::App* sub) { return sub->check_name(std::string(word)); });
    if (named != subcommands.end()) {
      command = *named;
      path += " " + command->get_name();
      continue;
    }
    std::vector<std::string> names;
    for (const CLI::App* sub : subcommands) names.push_back(sub->get_name());
    std::string listed;
    for (const std::string& name : names) listed += (listed.empty() ? "" : ", ") + name;
    const std::optional<std::string> best = lowcomm::nearest_name(word, names);
    return path + ": '" + std::string(word) + "' is not a subcommand" +
           (best ? "; did you mean '" + *best + "'?" : "") + " (" + path + " has: " + listed + ")";
  }
  return std::nullopt;
}

}  // namespace

int main(int argc, char** argv) {
  lowcomm::cli::keep_freed_memory();  // before anything allocates
  CLI::App app{"lowcomm: low-communication distributed training research toolkit", "lowcomm"};
  app.set_version_flag("--version", std::string(lowcomm::build_info().version));
  app.require_subcommand(1);
  app.add_option("--plugin", "load a shared library that registers compressors, strategies or optimizers "
                             "(repeatable; also LOWCOMM_PLUGINS=a.so:b.so)")
      ->type_name("LIBRARY")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->each(lowcomm::cli::load_plugin);
  lowcomm::cli::add_info_command(app);
  lowcomm::cli::add_bench_command(app);
  lowcomm::cli::add_replay_command(app);
  lowcomm::cli::add_train_command(app);
  lowcomm::cli::add_sweep_command(app);
  lowcomm::cli::add_plan_command(app);
  lowcomm::cli::add_prepare_data_command(app);

  try {
    lowcomm::cli::load_plugins_from_environment();
    if (const std::optional<std::string> unknown = unknown_subcommand(app, argc, argv)) {
      if (lowcomm::cli::launcher_rank() != 0) return 0;  // as for a parse error, below
      std::fprintf(stderr, "%s\n", unknown->c_str());
      return 2;
    }
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // MPI has not started yet: under mpiexec or srun every rank parses, and only the first speaks.
    // The others leave quietly with status 0, so that the launcher, which kills the job when a rank
    // fails, cannot kill rank 0 before it has said what is wrong; the launcher reports rank 0's
    // status. --help and --version exit 0; a mistake on the command line is a usage error, 2.
    if (lowcomm::cli::launcher_rank() != 0) return 0;
    app.exit(e);
    return e.get_exit_code() == 0 ? 0 : 2;
  } catch (...) {
    return lowcomm::cli::report_failure(std::current_exception());
  }
  return 0;
}
