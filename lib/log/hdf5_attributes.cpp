#include "hdf5_attributes.hpp"

#include <fmt/format.h>

#include "hdf5_handle.hpp"

namespace lowcomm::log_detail {

namespace {

Hdf5Id utf8_string_type(const ReportedFile& file) {
  Hdf5Id type(check(H5Tcopy(H5T_C_S1), file, "cannot make a string type"), H5Tclose);
  check(H5Tset_size(type.get(), H5T_VARIABLE), file, "cannot make a string type");
  check(H5Tset_cset(type.get(), H5T_CSET_UTF8), file, "cannot make a string type");
  return type;
}

// Writes `data` (already in `memory_type`) as a new attribute stored as `file_type`, replacing
// any attribute of that name.
void write_attribute(hid_t object, const std::string& name, hid_t file_type, hid_t memory_type,
                     hid_t space, const void* data, const ReportedFile& file) {
  const std::string what = fmt::format("cannot write attribute '{}'", name);
  if (check(H5Aexists(object, name.c_str()), file, what) > 0) {
    check(H5Adelete(object, name.c_str()), file, what);
  }
  Hdf5Id attribute(check(H5Acreate2(object, name.c_str(), file_type, space, H5P_DEFAULT,
                                    H5P_DEFAULT),
                         file, what),
                   H5Aclose);
  check(H5Awrite(attribute.get(), memory_type, data), file, what);
}

Hdf5Id scalar_space(const ReportedFile& file) {
  return Hdf5Id(check(H5Screate(H5S_SCALAR), file, "cannot make a dataspace"), H5Sclose);
}

}  // namespace

void write_string_attribute(hid_t object, const std::string& name, std::string_view value,
                            const ReportedFile& file) {
  const Hdf5Id type = utf8_string_type(file);
  const std::string text(value);  // HDF5 wants a NUL-terminated char*
  const char* data = text.c_str();
  write_attribute(object, name, type.get(), type.get(), scalar_space(file).get(), &data, file);
}

void write_strings_attribute(hid_t object, const std::string& name,
                             const std::vector<std::string>& values,
                             const ReportedFile& file) {
  const Hdf5Id type = utf8_string_type(file);
  const hsize_t count = values.size();
  const Hdf5Id space(check(H5Screate_simple(1, &count, nullptr), file, "cannot make a dataspace"),
                     H5Sclose);
  std::vector<const char*> data;
  data.reserve(values.size());
  for (const std::string& value : values) data.push_back(value.c_str());
  write_attribute(object, name, type.get(), type.get(), space.get(), data.data(), file);
}

void write_int_attribute(hid_t object, const std::string& name, std::int64_t value,
                         const ReportedFile& file) {
  write_attribute(object, name, H5T_STD_I64LE, H5T_NATIVE_INT64, scalar_space(file).get(), &value,
                  file);
}

void write_uint_attribute(hid_t object, const std::string& name, std::uint64_t value,
                          const ReportedFile& file) {
  write_attribute(object, name, H5T_STD_U64LE, H5T_NATIVE_UINT64, scalar_space(file).get(),
                  &value, file);
}

void write_double_attribute(hid_t object, const std::string& name, double value,
                            const ReportedFile& file) {
  write_attribute(object, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, scalar_space(file).get(),
                  &value, file);
}

std::optional<std::int64_t> read_int_attribute(hid_t object, const std::string& name,
                                               const ReportedFile& file) {
  const std::string what = fmt::format("cannot read attribute '{}'", name);
  if (check(H5Aexists(object, name.c_str()), file, what) == 0) return std::nullopt;
  const Hdf5Id attribute(check(H5Aopen(object, name.c_str(), H5P_DEFAULT), file, what), H5Aclose);
  const Hdf5Id space(check(H5Aget_space(attribute.get()), file, what), H5Sclose);
  if (H5Sget_simple_extent_npoints(space.get()) != 1) {
    throw_log_error(file, fmt::format("attribute '{}' is not a single integer", name));
  }
  std::int64_t value = 0;
  check(H5Aread(attribute.get(), H5T_NATIVE_INT64, &value), file,
        fmt::format("attribute '{}' is not an integer", name));
  return value;
}

std::optional<std::string> read_string_attribute(hid_t object, const std::string& name,
                                                 const ReportedFile& file) {
  const std::string what = fmt::format("cannot read attribute '{}'", name);
  if (check(H5Aexists(object, name.c_str()), file, what) == 0) return std::nullopt;
  const Hdf5Id attribute(check(H5Aopen(object, name.c_str(), H5P_DEFAULT), file, what), H5Aclose);
  const Hdf5Id space(check(H5Aget_space(attribute.get()), file, what), H5Sclose);
  const Hdf5Id stored(check(H5Aget_type(attribute.get()), file, what), H5Tclose);
  if (H5Sget_simple_extent_npoints(space.get()) != 1 || H5Tget_class(stored.get()) != H5T_STRING ||
      H5Tis_variable_str(stored.get()) <= 0) {
    throw_log_error(file, fmt::format("attribute '{}' is not a single variable-length string", name));
  }
  const Hdf5Id type = utf8_string_type(file);
  char* data = nullptr;
  check(H5Aread(attribute.get(), type.get(), &data), file, what);
  std::string value = data != nullptr ? std::string(data) : std::string();
  H5free_memory(data);
  return value;
}

}  // namespace lowcomm::log_detail
