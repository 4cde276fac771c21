#pragma once
// GoogleTest checks that a file holds the rows synthetic_rows.hpp describes.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "hdf5_reader.hpp"
#include "synthetic_rows.hpp"

namespace lowcomm::test {

// Expects every "steps" column to hold at least `rows` rows, and row i to be step steps[i]'s.
inline void expect_synthetic_steps(hid_t file, const std::vector<std::int64_t>& steps) {
  const auto rows = steps.size();
  const auto stored_steps = read_dataset<std::int64_t>(file, "/steps/step");
  ASSERT_GE(stored_steps.size(), rows);
  const std::vector<Column> columns = training_log_schema(kSyntheticWorldSize).tables[0].columns;
  for (std::size_t k = 0; k < columns.size(); ++k) {
    const Column& column = columns[k];
    const std::string name = "/steps/" + column.name;
    SCOPED_TRACE(name);
    if (column.type == ColumnType::Float64) {
      const auto values = read_dataset<double>(file, name);
      ASSERT_GE(values.size(), rows);
      for (std::size_t i = 0; i < rows; ++i) {
        const double expected = column.name == "loss" ? synthetic_loss(steps[i])
                                                      : synthetic_float(k, steps[i]);
        ASSERT_EQ(values[i], expected) << "row " << i;
      }
    } else if (column.width > 1) {
      const auto values = read_dataset<std::int64_t>(file, name);
      ASSERT_GE(values.size(), rows * column.width);
      for (std::size_t i = 0; i < rows; ++i) {
        for (int rank = 0; rank < kSyntheticWorldSize; ++rank) {
          ASSERT_EQ(values[i * column.width + static_cast<std::size_t>(rank)],
                    column.name == "present" ? synthetic_present(steps[i], rank)
                                             : synthetic_bytes(steps[i], rank, column.name == "bytes_received"))
              << "row " << i << " rank " << rank;
        }
      }
    } else {
      const auto values = read_dataset<std::int64_t>(file, name);
      ASSERT_GE(values.size(), rows);
      for (std::size_t i = 0; i < rows; ++i) {
        ASSERT_EQ(values[i], column.name == "step" ? steps[i] : 4096 * steps[i]) << "row " << i;
      }
    }
  }
}

// Steps first, first + 1, ..., first + count - 1.
inline std::vector<std::int64_t> step_range(std::int64_t first, std::int64_t count) {
  std::vector<std::int64_t> steps;
  for (std::int64_t s = first; s < first + count; ++s) steps.push_back(s);
  return steps;
}

}  // namespace lowcomm::test
