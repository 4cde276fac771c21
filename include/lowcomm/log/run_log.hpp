#pragma once
// The per-run HDF5 log (layout: docs/log-format.md). Rank 0 writes it with what it gathers from
// all ranks; the class itself knows nothing of MPI. A log holds tables (HDF5 groups such as
// "steps" and "eval") of columns (one extendible dataset each) that grow one row at a time. What
// the columns are is data, a LogSchema, so a new quantity is logged by declaring a column, never
// by changing the writer.
//
// The file is written in SWMR mode: a live run can be read with h5py, and a killed run keeps
// every row up to its last flush.
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "lowcomm/core/tensor.hpp"
#include "lowcomm/log/run_metadata.hpp"

namespace lowcomm {

enum class ColumnType { Float64, Int64 };

struct Column {
  std::string name;
  ColumnType type;
  std::size_t width = 1;  // >1: a 2-D dataset [rows, width], e.g. one value per rank
  std::string unit;
  std::string description;
  bool two_dimensional = false;  // [rows, width] even when width is 1 (see per_rank_column)
};

// A column with one value per rank: always 2-D [rows, world_size], also in a one-rank run, so
// that readers index it the same way whatever the world size.
Column per_rank_column(std::string name, ColumnType type, int world_size, std::string unit,
                       std::string description);

struct TableSchema {
  std::string name;
  std::vector<Column> columns;
};

// A dataset of fixed shape, created with the log and written block by block rather than grown
// row by row (the replay's parameters of every rank after every step). Its name may hold '/'
// to sit in a group ("params/layer0.weight"); the groups are made as needed.
enum class ArrayType { Float32, Float64, Int64 };

struct ArraySchema {
  std::string name;
  ArrayType type;
  std::vector<std::uint64_t> shape;
  std::string unit;
  std::string description;
};

struct LogSchema {
  std::vector<TableSchema> tables;
  std::vector<ArraySchema> arrays;  // a log with arrays is written once: it cannot be appended to
};

// The columns every step row has, whoever steps (train, replay): the traffic of the step's
// exchanges and the simulated clock, per rank where ranks differ. Filled by the apps' step
// recorder.
std::vector<Column> step_traffic_columns(int world_size);

// The columns a training run logs (DESIGN.md, "Run log"): table "steps" with one row per
// optimizer step, table "eval" with one row per evaluation. Per-rank columns have width
// world_size.
LogSchema training_log_schema(int world_size);

// What `lowcomm replay` writes (docs/replay.md): table "steps" (the traffic columns, and how far
// each rank's update is from a dense SGD step), array params/<name> [steps + 1, W, *shape] per
// tensor (the parameters on every rank after every step) and dense_bytes_sent [W].
LogSchema replay_log_schema(int world_size, std::span<const TensorInfo> tensors, std::int64_t steps);

// One row of one table, made by RunLog::row(). Every column must be set, with its own type and
// width, before RunLog::write_row; mistakes throw LogError naming the column.
class RowValues {
 public:
  RowValues& set(std::string_view column, double value);
  RowValues& set(std::string_view column, std::int64_t value);
  // Any other integer (an int loop counter, a size_t) is stored as Int64.
  template <std::integral T>
  RowValues& set(std::string_view column, T value) {
    return set(column, static_cast<std::int64_t>(value));
  }
  RowValues& set(std::string_view column, std::span<const double> values);
  RowValues& set(std::string_view column, std::span<const std::int64_t> values);

 private:
  friend class RunLog;
  using Values = std::variant<std::monostate, std::vector<double>, std::vector<std::int64_t>>;

  explicit RowValues(std::shared_ptr<const TableSchema> table);
  std::size_t column_index(std::string_view column, ColumnType type, std::size_t width) const;
  const void* data(std::size_t column) const;  // throws when the column was not set

  std::shared_ptr<const TableSchema> table_;  // identifies the RunLog table the row belongs to
  std::vector<Values> values_;                // one per column of table_
};

struct RunLogOptions {
  // Rows reach the file (and live readers) at flushes: write_row flushes once flush_every_rows
  // rows (counted over all tables) have been written since the last flush, or when it is called
  // flush_every_seconds or more after it. A killed run loses at most the rows since then.
  std::size_t flush_every_rows = 10;
  double flush_every_seconds = 10.0;
};

// Movable, not copyable; the destructor flushes and closes, never throws (call close() to see
// errors). Not thread-safe: one thread writes a log.
class RunLog {
 public:
  // A new log at `path` (created under its final name, as SWMR readers need). Throws LogError if
  // the file exists (unless overwrite), its folder is missing, or the schema is malformed.
  static RunLog create(const std::filesystem::path& path, const LogSchema& schema,
                       const RunMetadata& metadata, RunLogOptions options = {},
                       bool overwrite = false);

  // Opens an existing log to add rows, also one left behind by a killed writer (the previous
  // writer must be gone). Checks the format version and that the file holds exactly `schema`'s
  // tables and columns. With drop_rows_from_step, first removes the rows of every table whose
  // "step" column is >= it (a run resumed from a checkpoint at step S logs S onwards again).
  // Increments the root attribute resume_count, records SLURM_RESTART_COUNT when set, and keeps
  // `latest_config` (the resuming job's resolved configuration, whose train.steps may differ
  // from the first job's) as the attribute latest_config when it is not empty.
  static RunLog append(const std::filesystem::path& path, const LogSchema& schema,
                       RunLogOptions options = {},
                       std::optional<std::int64_t> drop_rows_from_step = std::nullopt,
                       std::string_view latest_config = {});

  RunLog(RunLog&&) noexcept;
  RunLog& operator=(RunLog&&) noexcept;
  RunLog(const RunLog&) = delete;
  RunLog& operator=(const RunLog&) = delete;
  ~RunLog();

  RowValues row(std::string_view table) const;  // an empty row of that table
  void write_row(const RowValues& row);
  // Writes the block of array `name` at `leading` (one index per leading dimension), which spans
  // the remaining dimensions: values.size() must be their product. The type must be the array's.
  void write_array(std::string_view name, std::span<const std::uint64_t> leading, std::span<const float> values);
  void write_array(std::string_view name, std::span<const std::uint64_t> leading, std::span<const double> values);
  void write_array(std::string_view name, std::span<const std::uint64_t> leading,
                   std::span<const std::int64_t> values);
  std::int64_t rows(std::string_view table) const;
  void flush();  // makes every row written so far visible to readers and safe from a kill
  void close();  // flushes and closes; later calls other than close() throw

 private:
  struct Impl;
  explicit RunLog(std::unique_ptr<Impl> impl);
  Impl& open_impl() const;
  void write_block(std::string_view name, std::span<const std::uint64_t> leading, ArrayType type, const void* data,
                   std::size_t elements);

  std::unique_ptr<Impl> impl_;
};

// The resolved configuration (TOML text) the run log at `path` was created with: its `config`
// attribute, which `lowcomm plan --model DIR` and a refused --resume read. nullopt when the file
// has none; throws LogError when it cannot be opened as HDF5.
std::optional<std::string> read_run_config(const std::filesystem::path& path);
// The configuration of the job that last started or resumed the run: its `latest_config`
// attribute, else `config`. What a bare `train --resume` continues with.
std::optional<std::string> read_latest_run_config(const std::filesystem::path& path);

}  // namespace lowcomm
