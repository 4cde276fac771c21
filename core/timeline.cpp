#include "lowcomm/core/timeline.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

namespace lowcomm {

Timeline& Timeline::global() {
  static Timeline timeline;
  return timeline;
}

void Timeline::start() {
  spans_.clear();
  tracks_.clear();
  origin_ = SteadyClock::now();
  enabled_ = true;
}

void Timeline::stop() { enabled_ = false; }

double Timeline::now_s() const { return seconds_since(origin_); }

double Timeline::since_start(double steady_epoch_s) const {
  return steady_epoch_s - std::chrono::duration<double>(origin_.time_since_epoch()).count();
}

void Timeline::record(std::string_view track, std::string_view name, double begin_s, double end_s, bool simulated) {
  if (!enabled_) return;
  spans_.push_back({std::string(track), std::string(name), begin_s, std::max(begin_s, end_s), simulated,
                    track_id(track, simulated)});
}

int Timeline::track_id(std::string_view track, bool simulated) {
  int next = 0;
  for (const TimelineTrack& t : tracks_) {
    if (t.simulated != simulated) continue;
    if (t.name == track) return t.id;
    ++next;
  }
  tracks_.push_back({std::string(track), simulated, next});
  return next;
}

std::vector<TimelineSpan> Timeline::take() { return std::exchange(spans_, {}); }

TimelineScope::TimelineScope(std::string_view track, std::string_view name) : track_(track), name_(name) {
  if (Timeline::global().enabled()) begin_s_ = Timeline::global().now_s();
}

TimelineScope::~TimelineScope() {
  Timeline& timeline = Timeline::global();
  if (begin_s_ >= 0 && timeline.enabled()) timeline.record(track_, name_, begin_s_, timeline.now_s());
}

MeasuredSpan::MeasuredSpan(std::string_view track, std::string_view name)
    : track_(track), name_(name), start_(SteadyClock::now()),
      begin_s_(Timeline::global().enabled() ? Timeline::global().now_s() : 0.0) {}

double MeasuredSpan::stop() {
  const double seconds = seconds_since(start_);
  if (!stopped_) Timeline::global().record(track_, name_, begin_s_, begin_s_ + seconds);
  stopped_ = true;
  return seconds;
}

namespace {

// A JSON string literal (the names are lowcomm's own, but a tensor name could hold anything).
std::string quoted(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
    } else {
      out += c;
    }
  }
  return out + "\"";
}

}  // namespace

std::string chrome_trace_events(const std::vector<TimelineSpan>& spans, int rank, int world_size) {
  std::string out;
  for (const TimelineSpan& span : spans) {
    if (!out.empty()) out += ",\n";
    out += fmt::format(R"({{"name":{},"cat":{},"ph":"X","ts":{:.3f},"dur":{:.3f},"pid":{},"tid":{}}})",
                       quoted(span.name), quoted(span.track), span.begin_s * 1e6, (span.end_s - span.begin_s) * 1e6,
                       span.simulated ? world_size + rank : rank, span.track_id);
  }
  return out;
}

std::string chrome_trace_names(const std::vector<TimelineTrack>& tracks, int rank, int world_size) {
  std::string out = fmt::format(
      R"({{"name":"process_name","ph":"M","pid":{},"args":{{"name":"rank {}"}}}},)"
      "\n"
      R"json({{"name":"process_name","ph":"M","pid":{},"args":{{"name":"rank {} (simulated clock)"}}}})json",
      rank, rank, world_size + rank, rank);
  for (const TimelineTrack& track : tracks) {
    out += fmt::format(",\n" R"({{"name":"thread_name","ph":"M","pid":{},"tid":{},"args":{{"name":{}}}}})",
                       track.simulated ? world_size + rank : rank, track.id, quoted(track.name));
  }
  return out;
}

}  // namespace lowcomm
