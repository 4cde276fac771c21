#include <fmt/format.h>

#include <algorithm>

#include "lowcomm/error.hpp"
#include "lowcomm/log/run_log.hpp"

namespace lowcomm {

namespace {

std::string_view type_name(ColumnType type) {
  return type == ColumnType::Float64 ? "Float64" : "Int64";
}

}  // namespace

RowValues::RowValues(std::shared_ptr<const TableSchema> table)
    : table_(std::move(table)), values_(table_->columns.size()) {}

std::size_t RowValues::column_index(std::string_view column, ColumnType type,
                                    std::size_t width) const {
  const auto& columns = table_->columns;
  const auto found = std::ranges::find(columns, column, &Column::name);
  if (found == columns.end()) {
    throw LogError(fmt::format("run log: table '{}' has no column '{}'", table_->name, column));
  }
  if (found->type != type) {
    throw LogError(fmt::format("run log: column '{}/{}' holds {}, not {}", table_->name, column,
                               type_name(found->type), type_name(type)));
  }
  if (found->width != width) {
    throw LogError(fmt::format("run log: column '{}/{}' takes {} value(s) per row, got {}",
                               table_->name, column, found->width, width));
  }
  return static_cast<std::size_t>(found - columns.begin());
}

RowValues& RowValues::set(std::string_view column, double value) {
  return set(column, std::span<const double>(&value, 1));
}

RowValues& RowValues::set(std::string_view column, std::int64_t value) {
  return set(column, std::span<const std::int64_t>(&value, 1));
}

RowValues& RowValues::set(std::string_view column, std::span<const double> values) {
  values_[column_index(column, ColumnType::Float64, values.size())] =
      std::vector<double>(values.begin(), values.end());
  return *this;
}

RowValues& RowValues::set(std::string_view column, std::span<const std::int64_t> values) {
  values_[column_index(column, ColumnType::Int64, values.size())] =
      std::vector<std::int64_t>(values.begin(), values.end());
  return *this;
}

const void* RowValues::data(std::size_t column) const {
  return std::visit(
      [&](const auto& values) -> const void* {
        if constexpr (std::is_same_v<std::decay_t<decltype(values)>, std::monostate>) {
          throw LogError(fmt::format("run log: row of table '{}' lacks column '{}'; set every "
                                     "column before write_row",
                                     table_->name, table_->columns[column].name));
        } else {
          return values.data();
        }
      },
      values_[column]);
}

}  // namespace lowcomm
