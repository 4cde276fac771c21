// `lowcomm bench progress`: does a non-blocking collective move while its rank computes? MPI does
// not promise asynchronous progress, and Open MPI's shared-memory and TCP transports move a
// collective's data only inside MPI calls. For each size, a float all-reduce started with
// Communicator::start_all_reduce is followed by compute (a busy loop, no MPI) lasting twice the
// blocking all-reduce's time, then waited for, in three ways:
//   idle:   compute, then wait                      (only MPI's own background progress)
//   test:   compute in 1 ms slices, test() between  (the training loop's periodic MPI_Test)
//   blocking reference: the blocking all_reduce's time
// Reported: the wait's time as a fraction of the blocking time; near 0 means the transfer was
// done during the compute, near 1 that it happened in the wait. network.mode is off (real time).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "bench_timing.hpp"
#include "commands.hpp"
#include "lowcomm/comm/communicator.hpp"
#include "lowcomm/core/timing.hpp"
#include "common/mpi_session.hpp"

namespace lowcomm::cli {

namespace {

// Busy compute of `seconds` that makes no MPI call; every `slice_s`, calls `between` (if any).
template <class Between>
void compute_for(double seconds, double slice_s, Between&& between) {
  const auto start = SteadyClock::now();
  auto slice = start;
  volatile double sink = 0;
  while (seconds_since(start) < seconds) {
    for (int i = 0; i < 1000; ++i) sink = sink + 1e-9 * i;
    if (slice_s > 0 && std::chrono::duration<double>(SteadyClock::now() - slice).count() >= slice_s) {
      between();
      slice = SteadyClock::now();
    }
  }
}

struct Row {
  double blocking_s, idle_wait_s, test_wait_s;
};

Row measure(Communicator& comm, std::vector<float>& data, int iterations) {
  Row best{1e30, 1e30, 1e30};
  for (int i = 0; i < iterations; ++i) {
    comm.control().barrier();
    auto start = SteadyClock::now();
    comm.all_reduce(std::span(data), ReduceOp::Sum);
    const double blocking = slowest_rank(comm.control(), seconds_since(start));
    best.blocking_s = std::min(best.blocking_s, blocking);
    for (const bool testing : {false, true}) {
      comm.control().barrier();
      PendingCollective pending = comm.start_all_reduce(std::span(data), ReduceOp::Sum);
      compute_for(2 * blocking, testing ? 1e-3 : 0.0, [&] { pending.test(); });
      start = SteadyClock::now();
      pending.wait();
      const double wait = slowest_rank(comm.control(), seconds_since(start));
      double& slot = testing ? best.test_wait_s : best.idle_wait_s;
      slot = std::min(slot, wait);
    }
  }
  return best;
}

void run() {
  run_with_mpi([&](MpiSession& mpi) {
    Communicator comm(MPI_COMM_WORLD, {});
    if (mpi.rank() == 0) {
      std::printf("# lowcomm bench progress: %d ranks; wait after compute of twice the blocking time, / blocking\n",
                  mpi.size());
      std::printf("# %12s %14s %12s %12s\n", "bytes", "blocking(ms)", "idle wait", "test() wait");
    }
    for (const std::size_t bytes : {std::size_t{1} << 16, std::size_t{1} << 20, std::size_t{1} << 24,
                                    std::size_t{1} << 26}) {
      std::vector<float> data(bytes / sizeof(float), 1.0f);
      const Row row = measure(comm, data, 3);
      if (mpi.rank() == 0) {
        std::printf("  %12zu %14.3f %12.2f %12.2f\n", bytes, row.blocking_s * 1e3, row.idle_wait_s / row.blocking_s,
                    row.test_wait_s / row.blocking_s);
        std::fflush(stdout);
      }
    }
  });
}

}  // namespace

void add_bench_progress_command(CLI::App& bench) {
  CLI::App* progress = bench.add_subcommand(
      "progress", "whether a non-blocking all-reduce progresses while its rank computes (idle, or with "
                  "periodic test()), 64 KiB to 64 MiB");
  progress->callback([] { run(); });
}

}  // namespace lowcomm::cli
