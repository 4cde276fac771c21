#include "timeline_file.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>

#include "common/mpi_session.hpp"
#include "lowcomm/core/timeline.hpp"
#include "lowcomm/error.hpp"

namespace lowcomm::cli {

namespace {

std::filesystem::path partial(const std::filesystem::path& path) {
  std::filesystem::path p = path;
  p += ".partial";
  return p;
}

}  // namespace

TimelineFile::TimelineFile(std::filesystem::path path, const ControlChannel& control)
    : path_(std::move(path)), control_(control) {
  on_rank_zero_agreed(control_, [&] {
    file_ = std::fopen(partial(path_).c_str(), "w");
    if (file_ == nullptr) {
      throw Error(fmt::format("--timeline {}: cannot create {}: {}", path_.string(), partial(path_).string(),
                              std::strerror(errno)));
    }
    std::fputs("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n", file_);
  });
  control_.barrier();
  Timeline::global().start();
}

TimelineFile::~TimelineFile() {
  Timeline::global().stop();
  if (file_ != nullptr) std::fclose(file_);
}

void TimelineFile::append(const std::vector<std::string>& texts) {
  for (const std::string& text : texts) {
    if (text.empty()) continue;
    if (!first_) std::fputs(",\n", file_);
    std::fwrite(text.data(), 1, text.size(), file_);
    first_ = false;
  }
}

void TimelineFile::flush() {
  const std::string mine = chrome_trace_events(Timeline::global().take(), control_.rank(), control_.size());
  const std::vector<std::string> texts = control_.gather_text_to_root(mine);
  on_rank_zero_agreed(control_, [&] {
    append(texts);
    if (std::fflush(file_) != 0 || std::ferror(file_)) {
      throw Error(fmt::format("--timeline {}: cannot write {}", path_.string(), partial(path_).string()));
    }
  });
}

void TimelineFile::close() {
  flush();
  const std::string names = chrome_trace_names(Timeline::global().tracks(), control_.rank(), control_.size());
  const std::vector<std::string> texts = control_.gather_text_to_root(names);
  Timeline::global().stop();
  on_rank_zero_agreed(control_, [&] {
    append(texts);
    std::fputs("\n]}\n", file_);
    const bool failed = std::fclose(file_) != 0;
    file_ = nullptr;
    if (failed) throw Error(fmt::format("--timeline {}: cannot write {}", path_.string(), partial(path_).string()));
    std::filesystem::rename(partial(path_), path_);
  });
}

}  // namespace lowcomm::cli
