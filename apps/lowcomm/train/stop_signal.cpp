#include "stop_signal.hpp"

#include <csignal>

namespace lowcomm::cli {

namespace {

volatile std::sig_atomic_t g_signal = 0;

extern "C" void remember_signal(int number) {
  if (number == SIGINT && g_signal == SIGINT) {
    // Ctrl-C twice: the user will not wait for the step boundary (both calls are async-signal-safe).
    std::signal(SIGINT, SIG_DFL);
    std::raise(SIGINT);
    return;
  }
  g_signal = number;
}

}  // namespace

void install_stop_signal_handlers() {
  std::signal(SIGTERM, remember_signal);
  std::signal(SIGUSR1, remember_signal);
  std::signal(SIGINT, remember_signal);
}

bool stop_signal_received() { return g_signal != 0; }
int stop_signal_number() { return g_signal; }

}  // namespace lowcomm::cli
