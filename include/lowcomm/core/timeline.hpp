#pragma once
// The spans `lowcomm train --timeline` draws (docs/training.md, "Timeline"): this process's
// (= this rank's) forward and backward passes, encodes and decodes, collectives, updates and
// checkpoints, each on a named track, in wall-clock seconds since the recording started; and the
// same rank's compute and collectives on the simulated clock (network.mode), where overlap shows
// as a collective beside compute. Recording is off unless started, so an instrumented place
// costs one branch. One thread records (the rank's main thread).
#include <string>
#include <string_view>
#include <vector>

#include "lowcomm/core/timing.hpp"

namespace lowcomm {

struct TimelineSpan {
  std::string track;  // e.g. "compute", "codec", "network"
  std::string name;   // e.g. "forward", "encode", "all_gather"
  double begin_s;
  double end_s;
  bool simulated;     // on the simulated clock rather than the wall clock
  int track_id;       // numbered by Timeline in order of first use, per clock
};

struct TimelineTrack {
  std::string name;
  bool simulated;
  int id;
};

class Timeline {
 public:
  static Timeline& global();

  void start();  // clears and records from now on; wall time 0 is now
  void stop();
  bool enabled() const { return enabled_; }
  double now_s() const;  // wall seconds since start()
  // The same for a steady_clock reading given as seconds since its epoch.
  double since_start(double steady_epoch_s) const;

  void record(std::string_view track, std::string_view name, double begin_s, double end_s, bool simulated = false);
  std::vector<TimelineSpan> take();  // the spans so far, oldest first; clears them
  const std::vector<TimelineTrack>& tracks() const { return tracks_; }  // every track used since start()

 private:
  int track_id(std::string_view track, bool simulated);

  bool enabled_ = false;
  SteadyClock::time_point origin_{};
  std::vector<TimelineSpan> spans_;
  std::vector<TimelineTrack> tracks_;
};

// Records the span of its own lifetime on `track`, when the timeline is on.
class TimelineScope {
 public:
  TimelineScope(std::string_view track, std::string_view name);
  ~TimelineScope();
  TimelineScope(const TimelineScope&) = delete;
  TimelineScope& operator=(const TimelineScope&) = delete;

 private:
  std::string_view track_, name_;  // literals at every call site
  double begin_s_ = -1.0;          // < 0: the timeline was off
};

// Measures a stretch for a report (seconds) and draws it on the timeline when it is on.
class MeasuredSpan {
 public:
  MeasuredSpan(std::string_view track, std::string_view name);
  double stop();  // the seconds since construction; records the span (once)

 private:
  std::string_view track_, name_;  // literals at every call site
  SteadyClock::time_point start_;
  double begin_s_;
  bool stopped_ = false;
};

// Rank `rank`'s spans as Chrome trace events (part of a trace file's "traceEvents": comma-
// separated objects, no brackets; Perfetto and chrome://tracing read them). Wall-clock spans are
// process `rank`, simulated ones process `world_size + rank`; each track a thread.
std::string chrome_trace_events(const std::vector<TimelineSpan>& spans, int rank, int world_size);
// The events that name those processes and threads.
std::string chrome_trace_names(const std::vector<TimelineTrack>& tracks, int rank, int world_size);

}  // namespace lowcomm
