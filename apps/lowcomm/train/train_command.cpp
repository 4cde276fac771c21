// `lowcomm train`: trains the GPT-style reference model (apps/gpt) on W MPI ranks with any
// strategy, compressor, optimizer, schedule and network scenario, writing one HDF5 run log
// (docs/log-format.md) and checkpoints to --out DIR. docs/training.md is the user's guide; the
// loop itself is the Trainer (trainer.hpp).
#include <fmt/format.h>

#include "commands.hpp"
#include "lowcomm/error.hpp"
#include "common/mpi_session.hpp"
#include "common/run_config.hpp"
#include "resume_config.hpp"
#include "stop_signal.hpp"
#include "train_arguments.hpp"
#include "train_keys.hpp"
#include "trainer.hpp"

namespace lowcomm::cli {

namespace {

void run(const TrainArguments& arguments) {
  // Before MPI starts (which takes a while): a SIGUSR1 or SIGTERM that comes early stops the run
  // cleanly at its first step boundary instead of killing it.
  install_stop_signal_handlers();
  run_with_mpi([&](MpiSession& mpi) {
    install_stop_signal_handlers();  // again: the MPI library may install its own at start-up
    agree_on_failure(mpi.control(), [&] {
      if (arguments.out.empty()) throw ConfigError("--out '' names no folder: give the run folder, e.g. --out runs/demo");
    });
    const Config config = train_configuration(arguments.config, arguments.resume, arguments.out, mpi.control());
    Trainer trainer(mpi, arguments, config);
    trainer.run();
  });
}

}  // namespace

void add_train_command(CLI::App& app) {
  CLI::App* train = app.add_subcommand(
      "train", "Train the GPT-style reference model with any strategy, compressor and network scenario");
  static TrainArguments arguments;  // CLI11 binds options to storage that outlives parsing
  add_config_arguments(*train, arguments.config);
  train->add_option("--out", arguments.out, "run folder: log.h5 and checkpoints/ (default runs/train)")
      ->type_name("DIR");
  train->add_flag("--resume", arguments.resume,
                  "continue from the last checkpoint in --out and append to its log, with the configuration "
                  "the log holds (--set may change train.steps, the *_every intervals and the other keys "
                  "docs/training.md lists; with --config, give the run's own); starts afresh when there is no "
                  "checkpoint yet, as a requeued Slurm job needs");
  train->add_option("--resume-from", arguments.resume_from,
                    "like --resume, from the kept checkpoint of this step (train.keep_checkpoints) instead "
                    "of the last; the checkpoints and log rows after it are dropped")
      ->type_name("STEP")
      ->check(CLI::NonNegativeNumber);
  train->add_flag("--force", arguments.force, "start over, deleting the log and checkpoints in --out");
  train->add_option("--timeline", arguments.timeline,
                    "also write a Chrome trace-event timeline (Perfetto, chrome://tracing) of every rank's "
                    "forward, backward, codec, collectives and updates, on the wall clock and on the simulated "
                    "clock (docs/training.md)")
      ->type_name("FILE.json");
  train->add_option("--record-trace", arguments.record_trace,
                    "also write every rank's gradients of every step, for `lowcomm replay`")
      ->type_name("FILE.h5");
  train->footer(fmt::format("Keys: {}; `lowcomm info` lists them. docs/training.md walks through a run.",
                            key_sections(train_schema())));
  train->callback([] {
    if (arguments.resume_from) arguments.resume = true;
    run(arguments);
  });
}

}  // namespace lowcomm::cli
