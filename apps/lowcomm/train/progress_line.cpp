#include "progress_line.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "lowcomm/core/timing.hpp"

namespace lowcomm::cli {

namespace {

std::string clock_text(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "--:--:--";
  const auto s = static_cast<long long>(seconds);
  return fmt::format("{:02d}:{:02d}:{:02d}", s / 3600, s / 60 % 60, s % 60);
}

// Open MPI's mpiexec hands its ranks a pseudo-terminal as stdout even when its own output goes to
// a file, so under it isatty() says nothing about where the text ends up: print lines there.
bool on_a_terminal() {
  return isatty(fileno(stdout)) != 0 && std::getenv("OMPI_COMM_WORLD_SIZE") == nullptr;
}

}  // namespace

ProgressLine::ProgressLine(std::int64_t first_step, std::int64_t steps, std::int64_t every)
    : first_(first_step), steps_(steps), every_(every < 1 ? 1 : every), terminal_(on_a_terminal()),
      start_(std::chrono::steady_clock::now()) {}

void ProgressLine::print(const ProgressValues& v) {
  const bool last = v.step + 1 == steps_;
  if (!terminal_ && (v.step + 1) % every_ != 0 && !last) return;
  const double elapsed = seconds_since(start_);
  const double done = static_cast<double>(v.step + 1 - first_);
  const double eta = done > 0 ? elapsed / done * static_cast<double>(steps_ - v.step - 1) : NAN;
  const std::string text = fmt::format(
      "step {} ({}/{} done) | loss {:.4f} | lr {:.2e} | {:.0f} tok/s | sent {:.2f} MB | comm {:.2f} s modelled | "
      "sim {} | ETA {}",
      v.step, v.step + 1, steps_, v.loss, v.lr, v.tokens_per_s, v.sent_bytes_total / 1e6, v.modelled_comm_s_total,
      clock_text(v.simulated_s), clock_text(eta));
  if (terminal_) {
    std::printf("\r\033[K%s", text.c_str());
    open_line_ = true;
    if (last) finish();
  } else {
    std::printf("%s\n", text.c_str());
  }
  std::fflush(stdout);
}

void ProgressLine::print_message(const char* text) {
  finish();
  std::printf("%s\n", text);
  std::fflush(stdout);
}

void ProgressLine::finish() {
  if (open_line_) std::printf("\n");
  open_line_ = false;
  std::fflush(stdout);
}

}  // namespace lowcomm::cli
