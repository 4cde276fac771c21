#include "lowcomm/log/plan_file.hpp"

#include <fmt/format.h>

#include "hdf5_attributes.hpp"
#include "hdf5_handle.hpp"
#include "whole_file.hpp"
#include "lowcomm/error.hpp"

namespace lowcomm {

using namespace log_detail;

namespace {

constexpr std::string_view kKind = "plan file";
constexpr std::int64_t kFormatVersion = 1;

void write_column(hid_t group, const std::string& name, hid_t type, std::size_t rows, const void* data,
                  const ReportedFile& file) {
  const hsize_t extent = rows;
  const Hdf5Id space(check(H5Screate_simple(1, &extent, nullptr), file, "cannot make a dataspace"), H5Sclose);
  const Hdf5Id set(check(H5Dcreate2(group, name.c_str(), type, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                         file, fmt::format("cannot create column {}", name)),
                   H5Dclose);
  check(H5Dwrite(set.get(), type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), file,
        fmt::format("cannot write column {}", name), "check the free disk space");
}

}  // namespace

void write_plan_file(const std::filesystem::path& path, const PlanTable& table) {
  std::size_t rows = 0;
  bool first = true;
  const auto check_rows = [&](const std::string& name, std::size_t n) {
    if (!first && n != rows) {
      throw LogError(fmt::format("plan file {}: column {} has {} entries, the others {}", path.string(), name, n, rows));
    }
    rows = n;
    first = false;
  };
  for (const auto& [name, values] : table.text_columns) check_rows(name, values.size());
  for (const auto& [name, values] : table.number_columns) check_rows(name, values.size());
  write_whole_file(path, kKind, [&](hid_t h5, const ReportedFile& file) {
    write_string_attribute(h5, "lowcomm_file", "plan", file);
    write_int_attribute(h5, "format_version", kFormatVersion, file);
    write_string_attribute(h5, "model", table.model, file);
    write_int_attribute(h5, "parameters", table.parameters, file);
    write_int_attribute(h5, "world_size", table.world_size, file);
    const Hdf5Id group(check(H5Gcreate2(h5, "plan", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), file,
                             "cannot create group plan"),
                       H5Gclose);
    const Hdf5Id text(check(H5Tcopy(H5T_C_S1), file, "cannot make a string type"), H5Tclose);
    check(H5Tset_size(text.get(), H5T_VARIABLE), file, "cannot make a string type");
    check(H5Tset_cset(text.get(), H5T_CSET_UTF8), file, "cannot make a string type");
    for (const auto& [name, values] : table.text_columns) {
      std::vector<const char*> pointers;
      for (const std::string& v : values) pointers.push_back(v.c_str());
      write_column(group.get(), name, text.get(), rows, pointers.data(), file);
    }
    for (const auto& [name, values] : table.number_columns) {
      write_column(group.get(), name, H5T_NATIVE_DOUBLE, rows, values.data(), file);
    }
  });
}

}  // namespace lowcomm
