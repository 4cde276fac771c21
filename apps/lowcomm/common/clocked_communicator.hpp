#pragma once
// What every command that exchanges data (train, replay, the benches) makes first: the run's
// simulated clock and the Communicator that puts its calls on it, both from the configuration
// (network.*, comm.*, cluster.*; network_config.hpp). Collective: every rank constructs it together.
#include <mpi.h>

#include "lowcomm/comm/communicator.hpp"
#include "lowcomm/comm/network_config.hpp"
#include "lowcomm/comm/run_clock.hpp"

namespace lowcomm::cli {

struct ClockedCommunicator {
  ClockedCommunicator(const Config& config, const ControlChannel& control)
      : ClockedCommunicator(communicator_options_from_config(config, control.size()),
                            clock_options_from_config(config, control.size()), control) {}
  ClockedCommunicator(const CommunicatorOptions& options, ClockOptions clock_options, const ControlChannel& control)
      : clock(control, options.mode, std::move(clock_options)), comm(MPI_COMM_WORLD, options, &clock) {}

  RunClock clock;     // first: the Communicator holds it
  Communicator comm;
};

}  // namespace lowcomm::cli
