// Helper process for the SWMR tests (swmr_kill_test, read_with_h5py.py): creates a log of
// synthetic rows (synthetic_rows.hpp) and writes the "steps" rows of steps 0, 1, 2... (no eval
// rows, so rows and steps agree). After every row that makes the count a multiple of
// flush_every_rows (so RunLog has just flushed) it prints "flushed <rows>" on stdout. With
// max_steps > 0 it then prints "done <rows>" and waits to be killed without closing the log;
// with max_steps = 0 it writes until killed.
//
//   swmr_writer_child <log path> <flush_every_rows> <flush_every_seconds> <max_steps>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "synthetic_rows.hpp"

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s <log> <flush_every_rows> <flush_every_seconds> <max_steps>\n",
                 argv[0]);
    return 2;
  }
  try {
    using namespace lowcomm;
    const RunLogOptions options{std::stoul(argv[2]), std::stod(argv[3])};
    const std::int64_t max_steps = std::stoll(argv[4]);
    const auto metadata = RunMetadata::for_this_process(
        "[test]\nchild = true\n", test::kSyntheticWorldSize, {"a", "b", "c"}, 7);
    RunLog log = RunLog::create(argv[1], training_log_schema(test::kSyntheticWorldSize), metadata,
                                options, true);
    for (std::int64_t step = 0; max_steps == 0 || step < max_steps; ++step) {
      log.write_row(test::synthetic_step_row(log, step));
      const std::int64_t rows = step + 1;
      if (rows % static_cast<std::int64_t>(options.flush_every_rows) == 0) {
        std::printf("flushed %lld\n", static_cast<long long>(rows));
        std::fflush(stdout);
      }
    }
    std::printf("done %lld\n", static_cast<long long>(max_steps));
    std::fflush(stdout);
    for (;;) pause();  // keep the log open, as a running job would, until killed
  } catch (const std::exception& error) {
    std::fprintf(stderr, "swmr_writer_child: %s\n", error.what());
    return 1;
  }
}
