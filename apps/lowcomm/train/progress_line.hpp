#pragma once
// Rank 0's progress line: step (counted from 0, as the log, the checkpoints and every message
// count them, with how many of the run's steps are done), loss, tokens/s, MB sent, modelled
// communication, simulated clock and ETA. On a terminal it rewrites one line every step; otherwise (a Slurm output file, or any
// run under Open MPI's mpiexec, which makes every rank's stdout a pseudo-terminal) it prints a line
// every `every` steps and on the last one, so logs stay short.
#include <chrono>
#include <cstdint>

namespace lowcomm::cli {

struct ProgressValues {
  std::int64_t step = 0;  // 0-based, just finished
  double loss = 0;
  double lr = 0;
  double tokens_per_s = 0;
  double sent_bytes_total = 0;     // this rank, since the start of this process
  double modelled_comm_s_total = 0;
  double simulated_s = 0;
};

class ProgressLine {
 public:
  ProgressLine(std::int64_t first_step, std::int64_t steps, std::int64_t every);
  void print(const ProgressValues& values);
  void print_message(const char* text);  // a line of its own, keeping the progress line intact
  void finish();                         // ends a rewritten line

 private:
  std::int64_t first_, steps_, every_;
  bool terminal_;
  bool open_line_ = false;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace lowcomm::cli
