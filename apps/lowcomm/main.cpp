// lowcomm: one executable, subcommands for each job (see `lowcomm --help`).
#include <CLI/CLI.hpp>

#include <exception>
#include <string>

#include "commands.hpp"
#include "lowcomm/build_info.hpp"
#include "common/mpi_session.hpp"
#include "common/plugins.hpp"

int main(int argc, char** argv) {
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
