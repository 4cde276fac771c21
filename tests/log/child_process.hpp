#pragma once
// A child process whose stdout the test reads line by line; killed (SIGKILL) and reaped when the
// object goes away, so a failing test leaves no writer behind.
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

extern char** environ;

namespace lowcomm::test {

class ChildProcess {
 public:
  explicit ChildProcess(std::vector<std::string> arguments) {
    int pipe_ends[2];
    if (pipe(pipe_ends) != 0) throw std::runtime_error("pipe failed");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, pipe_ends[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, pipe_ends[0]);
    posix_spawn_file_actions_addclose(&actions, pipe_ends[1]);
    std::vector<char*> argv;
    for (std::string& argument : arguments) argv.push_back(argument.data());
    argv.push_back(nullptr);
    const int failed = posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    close(pipe_ends[1]);
    if (failed != 0) {
      close(pipe_ends[0]);
      throw std::runtime_error("cannot start " + arguments[0]);
    }
    output_ = fdopen(pipe_ends[0], "r");
  }
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess() {
    kill_and_wait();
    std::fclose(output_);
  }

  // The next line the child printed, without its newline; std::nullopt once it closed stdout.
  std::optional<std::string> read_line() {
    std::string line;
    for (int c = std::fgetc(output_); c != EOF; c = std::fgetc(output_)) {
      if (c == '\n') return line;
      line.push_back(static_cast<char>(c));
    }
    return std::nullopt;
  }

  void kill_and_wait() {
    if (pid_ <= 0) return;
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = 0;
  }

 private:
  pid_t pid_ = 0;
  std::FILE* output_ = nullptr;
};

}  // namespace lowcomm::test
