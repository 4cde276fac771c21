#include "schema_validation.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <string>

#include "lowcomm/error.hpp"

namespace lowcomm::log_detail {

namespace {

// Names become HDF5 link names: '/' would make a path, "." names the group itself.
void validate_name(const std::string& name, std::string_view what) {
  if (name.empty() || name == "." || name.find('/') != std::string::npos) {
    throw LogError(fmt::format("log schema: {} name '{}' is not allowed; use a non-empty name "
                               "without '/'",
                               what, name));
  }
}

}  // namespace

void validate_schema(const LogSchema& schema) {
  std::set<std::string> table_names;
  for (const TableSchema& table : schema.tables) {
    validate_name(table.name, "table");
    if (!table_names.insert(table.name).second) {
      throw LogError(fmt::format("log schema: table '{}' is declared twice", table.name));
    }
    if (table.columns.empty()) {
      throw LogError(fmt::format("log schema: table '{}' has no columns", table.name));
    }
    std::set<std::string> column_names;
    for (const Column& column : table.columns) {
      validate_name(column.name, fmt::format("table '{}': column", table.name));
      if (!column_names.insert(column.name).second) {
        throw LogError(fmt::format("log schema: column '{}/{}' is declared twice", table.name,
                                   column.name));
      }
      if (column.width == 0) {
        throw LogError(fmt::format("log schema: column '{}/{}' has width 0; use 1 or more",
                                   table.name, column.name));
      }
      if (column.name == "step" && (column.type != ColumnType::Int64 || column.width != 1)) {
        throw LogError(fmt::format("log schema: column '{}/step' must be Int64 of width 1 "
                                   "(resuming a run drops rows by it)",
                                   table.name));
      }
    }
  }
  // An array's first path component is a root object beside the tables: it must not be one.
  std::set<std::string> array_names;
  for (const ArraySchema& array : schema.arrays) {
    std::size_t start = 0;
    while (true) {
      const std::size_t slash = array.name.find('/', start);
      validate_name(array.name.substr(start, slash == std::string::npos ? std::string::npos : slash - start),
                    fmt::format("array '{}': path component", array.name));
      if (slash == std::string::npos) break;
      start = slash + 1;
    }
    const std::string root = array.name.substr(0, array.name.find('/'));
    if (table_names.contains(root)) {
      throw LogError(fmt::format("log schema: array '{}' would sit inside table '{}'", array.name, root));
    }
    if (!array_names.insert(array.name).second) {
      throw LogError(fmt::format("log schema: array '{}' is declared twice", array.name));
    }
    if (array.shape.empty() || std::ranges::find(array.shape, 0u) != array.shape.end()) {
      throw LogError(fmt::format("log schema: array '{}' needs at least one dimension, each of extent 1 or more",
                                 array.name));
    }
  }
}

}  // namespace lowcomm::log_detail
