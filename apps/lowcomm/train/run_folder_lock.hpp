#pragma once
// One run folder, one writer. `lowcomm train` holds an exclusive flock(2) on <out>/lock for the
// whole run, taken before it touches anything there (before --force removes a previous run's
// log), so a second job on the same --out, started fresh, with --force or with --resume, is
// refused while the first is alive. The kernel releases the lock when the holder exits or is
// killed, so a requeued or restarted job takes the folder back at once; the file stays behind
// and names the last holder (host, pid, start time) for the message.
#include <filesystem>
#include <string>

namespace lowcomm::cli {

class RunFolderLock {
 public:
  // Throws ConfigError naming the run that holds the lock (or LogError when the lock file cannot
  // be created).
  explicit RunFolderLock(const std::filesystem::path& run_dir);
  ~RunFolderLock();
  RunFolderLock(const RunFolderLock&) = delete;
  RunFolderLock& operator=(const RunFolderLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace lowcomm::cli
