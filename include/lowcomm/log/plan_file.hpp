#pragma once
// The table `lowcomm plan` computes, as an HDF5 file the analysis reads (docs/plan.md): root
// attributes lowcomm_file = "plan", format_version = 1, model, parameters and world_size, and a
// group /plan with one 1-D dataset per column and one entry per method (text as variable-length
// UTF-8 strings, numbers as float64). h5py reads it without lowcomm.
//
// The file is written as FILE.partial and renamed to FILE once complete.
#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace lowcomm {

struct PlanTable {
  std::string model;
  std::int64_t parameters = 0;
  int world_size = 0;
  // Every column has one entry per method.
  std::vector<std::pair<std::string, std::vector<std::string>>> text_columns;
  std::vector<std::pair<std::string, std::vector<double>>> number_columns;
};

// Throws LogError naming the file when it cannot be written, or when the columns differ in length.
void write_plan_file(const std::filesystem::path& file, const PlanTable& table);

}  // namespace lowcomm
