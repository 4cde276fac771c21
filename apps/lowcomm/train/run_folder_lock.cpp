#include "run_folder_lock.hpp"

#include <fcntl.h>
#include <fmt/chrono.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <ctime>

#include "lowcomm/error.hpp"

namespace lowcomm::cli {

namespace {

std::string holder_of(int fd) {
  std::array<char, 512> text{};
  const ssize_t n = pread(fd, text.data(), text.size() - 1, 0);
  std::string holder = n > 0 ? std::string(text.data(), static_cast<std::size_t>(n)) : std::string();
  while (!holder.empty() && (holder.back() == '\n' || holder.back() == ' ')) holder.pop_back();
  return holder.empty() ? "a process that has not written its name yet" : holder;
}

std::string this_process() {
  std::array<char, 256> host{};
  gethostname(host.data(), host.size() - 1);
  const std::time_t now = std::time(nullptr);
  return fmt::format("host {}, pid {}, started {:%Y-%m-%d %H:%M:%S}", host.data(), getpid(), fmt::localtime(now));
}

}  // namespace

RunFolderLock::RunFolderLock(const std::filesystem::path& run_dir) {
  const std::filesystem::path file = run_dir / "lock";
  fd_ = open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    throw LogError(fmt::format("cannot create {}: {}; check that the folder is writable", file.string(),
                               std::strerror(errno)));
  }
  if (flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    const std::string holder = holder_of(fd_);
    close(fd_);
    fd_ = -1;
    if (error != EWOULDBLOCK) {
      throw LogError(fmt::format("cannot lock {}: {}", file.string(), std::strerror(error)));
    }
    throw ConfigError(fmt::format("{} is in use by another run ({}): wait for it to finish or stop it, or "
                                  "choose another --out (--force and --resume never take a folder from a "
                                  "live run)",
                                  run_dir.string(), holder));
  }
  // The lock holds whatever happens here; a failed write only leaves this run's name out of the
  // message another run would print.
  const std::string me = this_process() + "\n";
  if (ftruncate(fd_, 0) == 0) (void)!pwrite(fd_, me.data(), me.size(), 0);
}

RunFolderLock::~RunFolderLock() {
  if (fd_ >= 0) close(fd_);  // releases the lock
}

}  // namespace lowcomm::cli
