#include "table_datasets.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstring>
#include <string>

#include "hdf5_attributes.hpp"

namespace lowcomm::log_detail {

namespace {

constexpr std::string_view kMismatchAdvice =
    "The log was written with other columns; resume with the lowcomm version and settings that "
    "started the run, or start a new log";

// About 256 rows per chunk, as few chunks as a long run needs without making a chunk of a wide
// per-rank column (thousands of ranks) larger than HDF5's default 1 MiB chunk cache.
hsize_t chunk_rows(std::size_t width) {
  constexpr std::size_t kMaxChunkBytes = 1 << 20;
  return std::clamp<std::size_t>(kMaxChunkBytes / (sizeof(double) * width), 1, 256);
}

int rank_of(const Column& column) { return column.width > 1 || column.two_dimensional ? 2 : 1; }

hid_t file_type(ColumnType type) {
  return type == ColumnType::Float64 ? H5T_IEEE_F64LE : H5T_STD_I64LE;
}

hid_t memory_type(ColumnType type) {
  return type == ColumnType::Float64 ? H5T_NATIVE_DOUBLE : H5T_NATIVE_INT64;
}

std::string dataset_path(const TableSchema& table, const Column& column) {
  return fmt::format("/{}/{}", table.name, column.name);
}

herr_t collect_name(hid_t /*group*/, const char* name, const H5L_info_t* /*info*/, void* names) {
  static_cast<std::vector<std::string>*>(names)->emplace_back(name);
  return 0;
}

std::vector<std::string> link_names(hid_t group, const std::filesystem::path& path) {
  std::vector<std::string> names;
  check(H5Literate(group, H5_INDEX_NAME, H5_ITER_INC, nullptr, collect_name, &names), path,
        "cannot list the objects in a group");
  return names;
}

bool has_type(hid_t dataset, ColumnType type, const std::filesystem::path& path) {
  const Hdf5Id stored(check(H5Dget_type(dataset), path, "cannot read a dataset's type"),
                      H5Tclose);
  if (H5Tget_size(stored.get()) != 8) return false;
  if (type == ColumnType::Float64) return H5Tget_class(stored.get()) == H5T_FLOAT;
  return H5Tget_class(stored.get()) == H5T_INTEGER && H5Tget_sign(stored.get()) == H5T_SGN_2;
}

}  // namespace

TableDatasets::TableDatasets(std::shared_ptr<const TableSchema> schema, std::filesystem::path path)
    : schema_(std::move(schema)), path_(std::move(path)) {}

TableDatasets TableDatasets::create(hid_t file, std::shared_ptr<const TableSchema> schema,
                                    const std::filesystem::path& path) {
  TableDatasets table(std::move(schema), path);
  const TableSchema& table_schema = *table.schema_;
  table.group_ = Hdf5Id(check(H5Gcreate2(file, table_schema.name.c_str(), H5P_DEFAULT,
                                         H5P_DEFAULT, H5P_DEFAULT),
                              path, fmt::format("cannot create table '{}'", table_schema.name)),
                        H5Gclose);
  for (const Column& column : table_schema.columns) {
    const std::string what =
        fmt::format("cannot create dataset {}", dataset_path(table_schema, column));
    const hsize_t width = column.width;
    const std::array<hsize_t, 2> dims = {0, width};
    const std::array<hsize_t, 2> max_dims = {H5S_UNLIMITED, width};
    const std::array<hsize_t, 2> chunk = {chunk_rows(column.width), width};
    const Hdf5Id space(
        check(H5Screate_simple(rank_of(column), dims.data(), max_dims.data()), path, what),
        H5Sclose);
    const Hdf5Id properties(check(H5Pcreate(H5P_DATASET_CREATE), path, what), H5Pclose);
    check(H5Pset_chunk(properties.get(), rank_of(column), chunk.data()), path, what);
    Hdf5Id dataset(check(H5Dcreate2(table.group_.get(), column.name.c_str(),
                                    file_type(column.type), space.get(), H5P_DEFAULT,
                                    properties.get(), H5P_DEFAULT),
                         path, what),
                   H5Dclose);
    write_string_attribute(dataset.get(), "unit", column.unit, path);
    write_string_attribute(dataset.get(), "description", column.description, path);
    table.datasets_.push_back(std::move(dataset));
  }
  return table;
}

TableDatasets TableDatasets::open(hid_t file, std::shared_ptr<const TableSchema> schema,
                                  const std::filesystem::path& path) {
  TableDatasets table(std::move(schema), path);
  const TableSchema& table_schema = *table.schema_;
  const char* name = table_schema.name.c_str();
  if (check(H5Lexists(file, name, H5P_DEFAULT), path, "cannot look up a table") == 0) {
    throw_log_error(path,
                    fmt::format("the file has no table '{}', which the schema declares", name),
                    kMismatchAdvice);
  }
  table.group_ = Hdf5Id(check(H5Gopen2(file, name, H5P_DEFAULT), path,
                              fmt::format("cannot open table '{}' as a group", name)),
                        H5Gclose);
  for (const std::string& stored : link_names(table.group_.get(), path)) {
    if (std::ranges::find(table_schema.columns, stored, &Column::name) ==
        table_schema.columns.end()) {
      throw_log_error(path,
                      fmt::format("the file has a column '{}/{}' that the schema lacks", name,
                                  stored),
                      kMismatchAdvice);
    }
  }
  std::vector<std::int64_t> lengths;
  for (const Column& column : table_schema.columns) {
    const std::string column_path = dataset_path(table_schema, column);
    if (check(H5Lexists(table.group_.get(), column.name.c_str(), H5P_DEFAULT), path,
              "cannot look up a column") == 0) {
      throw_log_error(path,
                      fmt::format("the file lacks column {}, which the schema declares",
                                  column_path),
                      kMismatchAdvice);
    }
    Hdf5Id dataset(check(H5Dopen2(table.group_.get(), column.name.c_str(), H5P_DEFAULT), path,
                         fmt::format("cannot open {} as a dataset", column_path)),
                   H5Dclose);
    const Hdf5Id space(check(H5Dget_space(dataset.get()), path, "cannot read a dataset's shape"),
                       H5Sclose);
    std::array<hsize_t, 2> dims = {0, 1};
    const int rank = H5Sget_simple_extent_ndims(space.get());
    const bool shape_matches = rank == rank_of(column) &&
                               H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr) >= 0 &&
                               dims[1] == column.width;
    if (!shape_matches || !has_type(dataset.get(), column.type, path)) {
      throw_log_error(path,
                      fmt::format("column {} in the file is not {} of width {} as the schema "
                                  "declares",
                                  column_path,
                                  column.type == ColumnType::Float64 ? "Float64" : "Int64",
                                  column.width),
                      kMismatchAdvice);
    }
    lengths.push_back(static_cast<std::int64_t>(dims[0]));
    table.datasets_.push_back(std::move(dataset));
  }
  const std::int64_t shortest = std::ranges::min(lengths);
  table.rows_ = std::ranges::max(lengths);
  if (shortest != table.rows_) table.resize(shortest);
  return table;
}

void TableDatasets::resize(std::int64_t rows) {
  set_extents(rows);
  rows_ = rows;
}

void TableDatasets::set_extents(std::int64_t rows) {
  for (std::size_t i = 0; i < datasets_.size(); ++i) {
    const Column& column = schema_->columns[i];
    const std::array<hsize_t, 2> dims = {static_cast<hsize_t>(rows), column.width};
    check(H5Dset_extent(datasets_[i].get(), dims.data()), path_,
          fmt::format("cannot resize dataset {}", dataset_path(*schema_, column)),
          "Check that the disk is not full");
  }
}

void TableDatasets::append_row(std::span<const void* const> columns) {
  const auto row = static_cast<hsize_t>(rows_);
  set_extents(rows_ + 1);  // rows_ counts the row only once every column holds it
  for (std::size_t i = 0; i < datasets_.size(); ++i) {
    const Column& column = schema_->columns[i];
    const std::string what =
        fmt::format("cannot write a row of {}", dataset_path(*schema_, column));
    const hsize_t width = column.width;
    const Hdf5Id file_space(check(H5Dget_space(datasets_[i].get()), path_, what), H5Sclose);
    const std::array<hsize_t, 2> start = {row, 0};
    const std::array<hsize_t, 2> count = {1, width};
    check(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start.data(), nullptr,
                              count.data(), nullptr),
          path_, what);
    const Hdf5Id memory_space(check(H5Screate_simple(1, &width, nullptr), path_, what), H5Sclose);
    check(H5Dwrite(datasets_[i].get(), memory_type(column.type), memory_space.get(),
                   file_space.get(), H5P_DEFAULT, columns[i]),
          path_, what, "Check that the disk is not full");
  }
  rows_ += 1;
}

void TableDatasets::drop_rows_from_step(std::int64_t step) {
  const auto step_column = std::ranges::find(schema_->columns, "step", &Column::name);
  if (step_column == schema_->columns.end() || rows_ == 0) return;
  const auto step_index = static_cast<std::size_t>(step_column - schema_->columns.begin());
  std::vector<std::int64_t> steps(static_cast<std::size_t>(rows_));
  check(H5Dread(datasets_[step_index].get(), H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT,
                steps.data()),
        path_, fmt::format("cannot read /{}/step", schema_->name));
  std::vector<std::size_t> kept;
  for (std::size_t r = 0; r < steps.size(); ++r) {
    if (steps[r] < step) kept.push_back(r);
  }
  if (kept.size() == steps.size()) return;
  // Steps normally grow with the row, so the rows to keep are a prefix and shrinking the
  // datasets is enough; otherwise (a log appended to without dropping) move the kept rows down.
  const bool prefix = kept.empty() || kept.back() == kept.size() - 1;
  if (!prefix) {
    for (std::size_t i = 0; i < datasets_.size(); ++i) {
      const Column& column = schema_->columns[i];
      const std::string what =
          fmt::format("cannot remove rows from {}", dataset_path(*schema_, column));
      const std::size_t row_bytes = 8 * column.width;
      std::vector<std::byte> values(steps.size() * row_bytes);
      check(H5Dread(datasets_[i].get(), memory_type(column.type), H5S_ALL, H5S_ALL, H5P_DEFAULT,
                    values.data()),
            path_, what);
      for (std::size_t j = 0; j < kept.size(); ++j) {
        std::memmove(values.data() + j * row_bytes, values.data() + kept[j] * row_bytes,
                     row_bytes);
      }
      const Hdf5Id file_space(check(H5Dget_space(datasets_[i].get()), path_, what), H5Sclose);
      const std::array<hsize_t, 2> start = {0, 0};
      const std::array<hsize_t, 2> count = {kept.size(), column.width};
      check(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start.data(), nullptr,
                                count.data(), nullptr),
            path_, what);
      const hsize_t values_kept = kept.size() * column.width;
      const Hdf5Id memory_space(check(H5Screate_simple(1, &values_kept, nullptr), path_, what),
                                H5Sclose);
      check(H5Dwrite(datasets_[i].get(), memory_type(column.type), memory_space.get(),
                     file_space.get(), H5P_DEFAULT, values.data()),
            path_, what);
    }
  }
  resize(static_cast<std::int64_t>(kept.size()));
}

void TableDatasets::flush() {
  for (std::size_t i = 0; i < datasets_.size(); ++i) {
    check(H5Dflush(datasets_[i].get()), path_,
          fmt::format("cannot flush {}", dataset_path(*schema_, schema_->columns[i])),
          "Check that the disk is not full");
  }
}

void check_no_undeclared_tables(hid_t file, const LogSchema& schema,
                                const std::filesystem::path& path) {
  for (const std::string& stored : link_names(file, path)) {
    if (std::ranges::find(schema.tables, stored, &TableSchema::name) == schema.tables.end()) {
      throw_log_error(path, fmt::format("the file has a table '{}' that the schema lacks", stored),
                      kMismatchAdvice);
    }
  }
}

}  // namespace lowcomm::log_detail
