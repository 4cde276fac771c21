#pragma once
// `lowcomm train --timeline FILE.json`: every rank's timeline (lowcomm/core/timeline.hpp) in one
// Chrome trace-event file that Perfetto and chrome://tracing open. Rank 0 writes it; the other
// ranks send their spans at each flush(), so no rank holds more than the spans since the last
// one. It is written as FILE.partial and renamed to FILE by close(): a file named FILE is a
// complete timeline (a run that fails leaves only the .partial).
#include <cstdio>
#include <filesystem>

#include "lowcomm/comm/control_channel.hpp"

namespace lowcomm::cli {

class TimelineFile {
 public:
  // Collective. Rank 0 creates FILE.partial; every rank starts recording at a common moment (a
  // barrier), which is time 0 of every rank's wall-clock tracks.
  TimelineFile(std::filesystem::path path, const ControlChannel& control);
  ~TimelineFile();  // stops recording; an unclosed file stays .partial
  TimelineFile(const TimelineFile&) = delete;
  TimelineFile& operator=(const TimelineFile&) = delete;

  void flush();  // collective: appends every rank's spans since the last flush
  void close();  // collective: flushes, names the tracks, completes and renames the file

 private:
  void append(const std::vector<std::string>& texts);

  std::filesystem::path path_;
  const ControlChannel& control_;
  std::FILE* file_ = nullptr;  // rank 0 only
  bool first_ = true;          // nothing written into traceEvents yet
};

}  // namespace lowcomm::cli
