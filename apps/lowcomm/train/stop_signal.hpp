#pragma once
// SIGTERM, SIGUSR1 (Slurm's warning before a time limit or preemption, `--signal=USR1@120`) and
// SIGINT (Ctrl-C on a run started without mpiexec; under mpiexec the ranks receive it as SIGTERM)
// only set a flag: the training loop checks it at the next step boundary, where all ranks agree
// to save a checkpoint, flush the log and exit 0. A second SIGINT before then ends the process
// at once, as Ctrl-C does elsewhere.
namespace lowcomm::cli {

void install_stop_signal_handlers();
bool stop_signal_received();
int stop_signal_number();  // the last one received, 0 if none

}  // namespace lowcomm::cli
