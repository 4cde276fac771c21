#include "lowcomm/log/run_log.hpp"

#include <fmt/format.h>
#include <hdf5.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <initializer_list>
#include <system_error>

#include "array_datasets.hpp"
#include "hdf5_attributes.hpp"
#include "hdf5_handle.hpp"
#include "lowcomm/error.hpp"
#include "metadata_attributes.hpp"
#include "schema_validation.hpp"
#include "table_datasets.hpp"

namespace lowcomm {

using log_detail::ArrayDataset;
using log_detail::check;
using log_detail::Hdf5Id;
using log_detail::SilenceHdf5Errors;
using log_detail::TableDatasets;
using log_detail::throw_log_error;

namespace {

using Clock = std::chrono::steady_clock;

// SWMR needs the latest file format, for both the writer and a resumed writer.
Hdf5Id latest_format_access(const std::filesystem::path& path) {
  Hdf5Id access(check(H5Pcreate(H5P_FILE_ACCESS), path, "cannot make file access properties"),
                H5Pclose);
  check(H5Pset_libver_bounds(access.get(), H5F_LIBVER_LATEST, H5F_LIBVER_LATEST), path,
        "cannot request the latest file format");
  return access;
}

// A writer killed in SWMR mode leaves its "open for writing" flags in the superblock, and HDF5
// then refuses to open the file for writing again ("may use h5clear"). Resuming exactly such a
// run is what append is for, so it clears the flags as `h5clear -s` does: through the file-access
// property h5clear itself sets. The property is HDF5-internal; where a version lacks it, the open
// fails with advice to run h5clear by hand.
void clear_status_flags_on_open(hid_t access, const std::filesystem::path& path) {
  constexpr const char* kClearStatusFlags = "clear_status_flags";
  if (H5Pexist(access, kClearStatusFlags) <= 0) return;
  hbool_t clear = true;
  check(H5Pset(access, kClearStatusFlags, &clear), path, "cannot set file access properties");
}

void start_swmr_write(hid_t file, const std::filesystem::path& path) {
  check(H5Fstart_swmr_write(file), path, "cannot start SWMR writing",
        "The file system must support SWMR (POSIX write ordering, e.g. not NFS)");
}

std::vector<TableDatasets> create_tables(hid_t file, const LogSchema& schema,
                                         const std::filesystem::path& path) {
  std::vector<TableDatasets> tables;
  for (const TableSchema& table : schema.tables) {
    tables.push_back(
        TableDatasets::create(file, std::make_shared<const TableSchema>(table), path));
  }
  return tables;
}

}  // namespace

struct RunLog::Impl {
  std::filesystem::path path;
  RunLogOptions options;
  Hdf5Id file;
  std::vector<TableDatasets> tables;  // declared after file: closed before it
  std::vector<ArrayDataset> arrays;   // likewise
  std::size_t rows_since_flush = 0;
  Clock::time_point last_flush = Clock::now();

  TableDatasets& table(std::string_view name) {
    const auto found = std::ranges::find_if(
        tables, [&](const TableDatasets& table) { return table.schema()->name == name; });
    if (found == tables.end()) {
      std::vector<std::string_view> names;
      for (const TableDatasets& table : tables) names.push_back(table.schema()->name);
      throw LogError(fmt::format("run log {}: no table '{}'; the log has {}", path.string(), name,
                                 fmt::join(names, ", ")));
    }
    return *found;
  }

  void flush() {
    for (TableDatasets& table : tables) table.flush();
    rows_since_flush = 0;
    last_flush = Clock::now();
  }

  void close() {
    flush();
    tables.clear();
    arrays.clear();
    check(file.close(), path, "cannot close the file", "Check that the disk is not full");
  }
};

RunLog::RunLog(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
RunLog::RunLog(RunLog&&) noexcept = default;

RunLog& RunLog::operator=(RunLog&& other) noexcept {
  if (this != &other) {
    try {
      close();
    } catch (const LogError& error) {
      std::fprintf(stderr, "lowcomm: %s\n", error.what());
    }
    impl_ = std::move(other.impl_);
  }
  return *this;
}

RunLog::~RunLog() {
  // A destructor cannot report the failure of the last flush, and rows may have been lost, so
  // say so rather than stay silent; close() lets a caller handle it.
  try {
    close();
  } catch (const LogError& error) {
    std::fprintf(stderr, "lowcomm: %s\n", error.what());
  }
}

RunLog RunLog::create(const std::filesystem::path& path, const LogSchema& schema,
                      const RunMetadata& metadata, RunLogOptions options, bool overwrite) {
  const SilenceHdf5Errors silence;
  log_detail::validate_schema(schema);
  std::error_code error;
  const std::filesystem::path folder = path.parent_path();
  if (!folder.empty() && !std::filesystem::is_directory(folder, error)) {
    throw_log_error(path, "its folder does not exist", "Create the folder first");
  }
  if (!overwrite && std::filesystem::exists(path, error)) {
    throw_log_error(path, "the file already exists",
                    "Choose another path, resume the run with RunLog::append, or overwrite it");
  }
  const Hdf5Id access = latest_format_access(path);
  auto impl = std::make_unique<Impl>();
  impl->path = path;
  impl->options = options;
  impl->file = Hdf5Id(check(H5Fcreate(path.c_str(), overwrite ? H5F_ACC_TRUNC : H5F_ACC_EXCL,
                                      H5P_DEFAULT, access.get()),
                            path, "cannot create the file", "Check the path and its permissions"),
                      H5Fclose);
  try {
    log_detail::write_metadata_attributes(impl->file.get(), metadata, path);
    impl->tables = create_tables(impl->file.get(), schema, path);
    for (const ArraySchema& array : schema.arrays) {
      impl->arrays.push_back(ArrayDataset::create(impl->file.get(), array, path));
    }
    start_swmr_write(impl->file.get(), path);
  } catch (const LogError&) {
    // A half-made log would only make the next create fail with "already exists".
    impl.reset();
    std::filesystem::remove(path, error);
    throw;
  }
  return RunLog(std::move(impl));
}

RunLog RunLog::append(const std::filesystem::path& path, const LogSchema& schema,
                      RunLogOptions options, std::optional<std::int64_t> drop_rows_from_step,
                      std::string_view latest_config) {
  const SilenceHdf5Errors silence;
  log_detail::validate_schema(schema);
  if (!schema.arrays.empty()) {
    throw_log_error(path, "its schema has arrays, which are sized when the log is created",
                    "Write such a log in one go with RunLog::create");
  }
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) {
    throw_log_error(path, "there is no such file to append to",
                    "Check the path, or start a new log with RunLog::create");
  }
  // HDF5 opens an empty file for writing as a new one, which would turn any empty file into an
  // HDF5 file before the checks below reject it.
  if (std::filesystem::file_size(path, error) == 0) {
    throw_log_error(path, "the file is empty, so it is not a run log",
                    "Start a new log with RunLog::create");
  }
  const Hdf5Id access = latest_format_access(path);
  clear_status_flags_on_open(access.get(), path);
  auto impl = std::make_unique<Impl>();
  impl->path = path;
  impl->options = options;
  impl->file =
      Hdf5Id(check(H5Fopen(path.c_str(), H5F_ACC_RDWR, access.get()), path,
                   "cannot open the file for appending",
                   "Give the path of a lowcomm run log whose writer has stopped; a file cut short "
                   "or damaged cannot be resumed (if HDF5 suggests it, run `h5clear -s` on it)"),
             H5Fclose);
  const hid_t file = impl->file.get();
  // An SWMR writer flushes its datasets but not the superblock, whose end-of-allocation address
  // a killed writer leaves short of the data it flushed; HDF5 would then refuse to read that
  // data. Raising it to the file's real end is what `h5clear --increment=0` does; for a closed
  // log both are equal and nothing changes.
  check(H5Fincrement_filesize(file, 0), path, "cannot repair the file's end address");
  log_detail::check_format_version(file, path);
  log_detail::check_no_undeclared_tables(file, schema, path);
  for (const TableSchema& table : schema.tables) {
    impl->tables.push_back(
        TableDatasets::open(file, std::make_shared<const TableSchema>(table), path));
  }
  if (drop_rows_from_step) {
    for (TableDatasets& table : impl->tables) table.drop_rows_from_step(*drop_rows_from_step);
  }
  log_detail::record_resume(file, path, latest_config);
  start_swmr_write(file, path);
  return RunLog(std::move(impl));
}

RunLog::Impl& RunLog::open_impl() const {
  if (!impl_) throw LogError("run log: the log is closed (or was moved from)");
  return *impl_;
}

RowValues RunLog::row(std::string_view table) const {
  return RowValues(open_impl().table(table).schema());
}

void RunLog::write_row(const RowValues& row) {
  Impl& impl = open_impl();
  const SilenceHdf5Errors silence;
  const auto table = std::ranges::find_if(
      impl.tables, [&](const TableDatasets& table) { return table.schema() == row.table_; });
  if (table == impl.tables.end()) {
    throw LogError(fmt::format("run log {}: the row of table '{}' was made by another RunLog",
                               impl.path.string(), row.table_->name));
  }
  std::vector<const void*> columns;
  for (std::size_t i = 0; i < row.values_.size(); ++i) columns.push_back(row.data(i));
  table->append_row(columns);
  impl.rows_since_flush += 1;
  const std::chrono::duration<double> since_flush = Clock::now() - impl.last_flush;
  if (impl.rows_since_flush >= impl.options.flush_every_rows ||
      since_flush.count() >= impl.options.flush_every_seconds) {
    impl.flush();
  }
}

void RunLog::write_block(std::string_view name, std::span<const std::uint64_t> leading, ArrayType type,
                         const void* data, std::size_t elements) {
  Impl& impl = open_impl();
  const SilenceHdf5Errors silence;
  const auto array = std::ranges::find_if(impl.arrays, [&](const ArrayDataset& a) { return a.schema().name == name; });
  if (array == impl.arrays.end()) {
    throw LogError(fmt::format("run log {}: no array '{}'", impl.path.string(), name));
  }
  array->write(leading, type, data, elements);
}

void RunLog::write_array(std::string_view name, std::span<const std::uint64_t> leading,
                         std::span<const float> values) {
  write_block(name, leading, ArrayType::Float32, values.data(), values.size());
}

void RunLog::write_array(std::string_view name, std::span<const std::uint64_t> leading,
                         std::span<const double> values) {
  write_block(name, leading, ArrayType::Float64, values.data(), values.size());
}

void RunLog::write_array(std::string_view name, std::span<const std::uint64_t> leading,
                         std::span<const std::int64_t> values) {
  write_block(name, leading, ArrayType::Int64, values.data(), values.size());
}

std::int64_t RunLog::rows(std::string_view table) const { return open_impl().table(table).rows(); }

void RunLog::flush() {
  Impl& impl = open_impl();
  const SilenceHdf5Errors silence;
  impl.flush();
}

void RunLog::close() {
  if (!impl_) return;
  const SilenceHdf5Errors silence;
  // The log counts as closed even when its last flush fails: retrying could not do better.
  const std::unique_ptr<Impl> impl = std::move(impl_);
  impl->close();
}

namespace {

// The first of `names` that the log at `path` holds as a string attribute (SWMR read: a log whose
// writer was killed still has the "open for writing" mark).
std::optional<std::string> read_first_attribute(const std::filesystem::path& path,
                                                std::initializer_list<const char*> names) {
  const Hdf5Id file(log_detail::check(H5Fopen(path.c_str(), H5F_ACC_RDONLY | H5F_ACC_SWMR_READ, H5P_DEFAULT), path,
                                      "cannot open it as HDF5"),
                    H5Fclose);
  for (const char* name : names) {
    if (std::optional<std::string> text = log_detail::read_string_attribute(file.get(), name, path)) return text;
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> read_run_config(const std::filesystem::path& path) {
  return read_first_attribute(path, {"config"});
}

std::optional<std::string> read_latest_run_config(const std::filesystem::path& path) {
  return read_first_attribute(path, {"latest_config", "config"});
}

}  // namespace lowcomm
