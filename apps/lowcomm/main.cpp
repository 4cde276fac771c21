// lowcomm: one executable, subcommands for each job (see `lowcomm --help`).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>

#include "commands.hpp"
#include "lowcomm/build_info.hpp"
#include "lowcomm/error.hpp"
#include "mpi_session.hpp"
#include "plugins.hpp"

int main(int argc, char** argv) {
  CLI::App app{"lowcomm: low-communication distributed training research toolkit", "lowcomm"};
  app.set_version_flag("--version", std::string(lowcomm::build_info().version));
  app.require_subcommand(1);
  app.add_option("--plugin", "load a shared library that registers compressors (repeatable; also "
                             "LOWCOMM_PLUGINS=a.so:b.so)")
      ->type_name("LIBRARY")
      ->each(lowcomm::cli::load_plugin);
  lowcomm::cli::add_info_command(app);
  lowcomm::cli::add_bench_command(app);
  lowcomm::cli::add_replay_command(app);

  const auto report = [](const char* kind, const char* message) {
    const int rank = lowcomm::cli::rank_for_messages();
    const std::string where = rank == 0 ? "" : fmt::format(" on rank {}", rank);
    std::fprintf(stderr, "lowcomm: %s%s: %s\n", kind, where.c_str(), message);
  };
  try {
    lowcomm::cli::load_plugins_from_environment();
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const lowcomm::cli::StoppedByOtherRank& e) {
    return e.exit_status();  // the failing rank has said why
  } catch (const lowcomm::ConfigError& e) {
    report("configuration error", e.what());
    return 2;
  } catch (const std::exception& e) {
    report("error", e.what());
    return 1;
  }
  return 0;
}
