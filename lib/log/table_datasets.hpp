#pragma once
// One table of the log on disk: group /<table> with one chunked dataset per column, first
// dimension unlimited, kept open while the log is.
#include <hdf5.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <vector>

#include "hdf5_handle.hpp"
#include "lowcomm/log/run_log.hpp"

namespace lowcomm::log_detail {

class TableDatasets {
 public:
  // Creates the group and its datasets (SWMR cannot add objects once writing has started).
  static TableDatasets create(hid_t file, std::shared_ptr<const TableSchema> schema,
                              const std::filesystem::path& path);

  // Opens the table, checking that its datasets are exactly the schema's columns with their
  // types and widths (LogError naming the column otherwise). A writer killed during a flush can
  // leave some columns a row longer than others; they are cut to the shortest so rows line up.
  static TableDatasets open(hid_t file, std::shared_ptr<const TableSchema> schema,
                            const std::filesystem::path& path);

  const std::shared_ptr<const TableSchema>& schema() const { return schema_; }
  std::int64_t rows() const { return rows_; }

  // One pointer per column, in schema order, to `width` values of the column's type.
  void append_row(std::span<const void* const> columns);

  // Removes the rows whose "step" is >= step; a table without a step column is left alone.
  void drop_rows_from_step(std::int64_t step);

  void flush();

 private:
  TableDatasets(std::shared_ptr<const TableSchema> schema, std::filesystem::path path);
  void resize(std::int64_t rows);       // sets the datasets' extents and rows_
  void set_extents(std::int64_t rows);  // the datasets only

  std::shared_ptr<const TableSchema> schema_;
  std::filesystem::path path_;
  Hdf5Id group_;
  std::vector<Hdf5Id> datasets_;  // one per column, in schema order
  std::int64_t rows_ = 0;
};

// Throws LogError when the file holds a table (root group) that the schema does not declare.
void check_no_undeclared_tables(hid_t file, const LogSchema& schema,
                                const std::filesystem::path& path);

}  // namespace lowcomm::log_detail
