#pragma once
// MPI for the subcommands that need it. Subcommands that need none (info, --help) never start
// it, so they also work on a login node without mpiexec.
#include <mpi.h>

#include <functional>
#include <optional>
#include <stdexcept>

#include "lowcomm/comm/control_channel.hpp"

namespace lowcomm::cli {

// A failure whose message has been printed already (or that another rank explains): main()
// only exits with its status. Agreed failures are reported before MPI_Finalize, while every rank
// is still alive: mpiexec kills the remaining ranks as soon as one exits non-zero.
class ReportedFailure : public std::runtime_error {
 public:
  explicit ReportedFailure(int exit_status)
      : std::runtime_error("failure already reported"), exit_status_(exit_status) {}
  int exit_status() const { return exit_status_; }

 private:
  int exit_status_;
};

// 2 for a configuration error (the user can fix the input), 1 for anything else.
int exit_status_of(const std::exception_ptr& error);

// Exit status of a train or replay stopped by NaN/Inf (train.nonfinite, replay.nonfinite = stop).
inline constexpr int kNonFiniteExit = 3;

// Prints "lowcomm: configuration error[ on rank r]: ..." (or "error") to stderr and returns the
// exit status; prints nothing for a ReportedFailure.
int report_failure(const std::exception_ptr& error);

class MpiSession {
 public:
  MpiSession();
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  // The uncounted channel over MPI_COMM_WORLD: agreement and bookkeeping before (and besides)
  // the counted Communicator.
  const ControlChannel& control() const { return *control_; }

 private:
  int rank_ = 0;
  int size_ = 1;
  std::optional<ControlChannel> control_;  // made after MPI_Init, freed before MPI_Finalize
};

// The rank of this process in the last MpiSession (0 without one): main() uses it to prefix
// error messages after MPI has been finalised.
int rank_for_messages();

// The rank the launcher gave this process (mpiexec, srun), read from its environment before MPI
// starts; 0 when not launched as one of several ranks.
int launcher_rank();

// Tells the kernels which of the node's GPUs this process takes (kernels::place_on_node): its
// local rank as the launcher announced it (core/local_rank.hpp). Every subcommand that computes
// calls it first (MpiSession does); throws lowcomm::Error when the launcher's variable is not a
// non-negative integer.
void place_on_launchers_device();

// Runs `work` on every rank (or only on rank 0) and makes all ranks agree on the outcome, so
// that a failure on some ranks cannot leave the others waiting in a collective. If rank 0
// failed, only rank 0 reports its error (one message, not W copies); otherwise every failed rank
// reports its own. All ranks then exit with the worst status.
void agree_on_failure(const ControlChannel& control, const std::function<void()>& work);
void on_rank_zero_agreed(const ControlChannel& control, const std::function<void()>& work);

// Runs a subcommand's body inside an MpiSession. An exception escaping the body after the setup
// phase (which uses agree_on_failure) would strand the other ranks, so it aborts the job.
int run_with_mpi(const std::function<void(MpiSession&)>& body);

}  // namespace lowcomm::cli
