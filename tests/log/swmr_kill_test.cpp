// What SWMR is for: a writer killed at any moment (SIGKILL: no destructor, no close) leaves a
// file that readers can open and that holds every row up to its last flush, and that
// RunLog::append can resume. The writer is a separate process (swmr_writer_child.cpp).
#include <gtest/gtest.h>

#include <string>

#include "child_process.hpp"
#include "synthetic_checks.hpp"
#include "temp_folder.hpp"

namespace lowcomm::test {
namespace {

// The number in the child's last "<word> <number>" line before it reports at least `rows`.
std::int64_t wait_for_report(ChildProcess& child, std::int64_t rows) {
  std::int64_t reported = 0;
  while (reported < rows) {
    const std::optional<std::string> line = child.read_line();
    if (!line) throw std::runtime_error("the writer child exited early");
    reported = std::stoll(line->substr(line->find(' ') + 1));
  }
  return reported;
}

std::int64_t stored_rows(hid_t file) {
  return static_cast<std::int64_t>(dataset_dims(file, "/steps/step")[0]);
}

ChildProcess start_writer(const std::filesystem::path& log, int flush_every_rows,
                          double flush_every_seconds, std::int64_t max_steps) {
  return ChildProcess({LOWCOMM_SWMR_WRITER_CHILD, log.string(), std::to_string(flush_every_rows),
                       std::to_string(flush_every_seconds), std::to_string(max_steps)});
}

// Kills the writer at different moments: each time the file must hold every flushed row and
// accept appends.
TEST(SwmrKill, KilledWriterKeepsFlushedRowsAndCanBeResumed) {
  const TempFolder folder;
  for (const std::int64_t kill_after : {5, 200, 3000}) {
    SCOPED_TRACE("killed after " + std::to_string(kill_after) + " flushed rows");
    const auto log = folder / ("killed_" + std::to_string(kill_after) + ".h5");
    std::int64_t flushed = 0;
    {
      ChildProcess writer = start_writer(log, 5, 1e9, 0);
      flushed = wait_for_report(writer, kill_after);
      writer.kill_and_wait();
    }
    {
      const Hdf5Object file = open_for_reading(log);
      EXPECT_GE(stored_rows(file.get()), flushed);
      expect_synthetic_steps(file.get(), step_range(0, flushed));
    }
    {
      RunLog resumed =
          RunLog::append(log, training_log_schema(kSyntheticWorldSize), {}, flushed);
      EXPECT_EQ(resumed.rows("steps"), flushed);
      for (std::int64_t step = flushed; step < flushed + 7; ++step) {
        resumed.write_row(synthetic_step_row(resumed, step));
      }
      resumed.close();
    }
    const Hdf5Object file = open_for_reading(log);
    EXPECT_EQ(stored_rows(file.get()), flushed + 7);
    expect_synthetic_steps(file.get(), step_range(0, flushed + 7));
    EXPECT_EQ(read_number_attribute<std::int64_t>(file.get(), "resume_count"), 1);
  }
}

// Rows reach readers in batches of flush_every_rows while the writer keeps the file open.
TEST(SwmrKill, RowsAreFlushedEveryNRows) {
  const TempFolder folder;
  const auto log = folder / "by_rows.h5";
  ChildProcess writer = start_writer(log, 4, 1e9, 10);
  EXPECT_EQ(wait_for_report(writer, 10), 10);  // "done 10": rows 1-8 flushed, 9-10 not yet
  const Hdf5Object file = open_for_reading(log);
  EXPECT_GE(stored_rows(file.get()), 8);
  expect_synthetic_steps(file.get(), step_range(0, 8));
}

// flush_every_seconds = 0: every row is due for a flush as soon as it is written.
TEST(SwmrKill, RowsAreFlushedAfterSeconds) {
  const TempFolder folder;
  const auto log = folder / "by_seconds.h5";
  ChildProcess writer = start_writer(log, 1000, 0.0, 10);
  EXPECT_EQ(wait_for_report(writer, 10), 10);
  const Hdf5Object file = open_for_reading(log);
  EXPECT_EQ(stored_rows(file.get()), 10);
  expect_synthetic_steps(file.get(), step_range(0, 10));
}

}  // namespace
}  // namespace lowcomm::test
