#pragma once
// Typed HDF5 attributes as the log stores them: strings are variable-length UTF-8 (h5py reads
// them as str), integers and floats little-endian 64-bit. Writing replaces an attribute of the
// same name.
#include <hdf5.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hdf5_handle.hpp"

namespace lowcomm::log_detail {

void write_string_attribute(hid_t object, const std::string& name, std::string_view value,
                            const ReportedFile& file);
void write_strings_attribute(hid_t object, const std::string& name,
                             const std::vector<std::string>& values,
                             const ReportedFile& file);
void write_int_attribute(hid_t object, const std::string& name, std::int64_t value,
                         const ReportedFile& file);
void write_uint_attribute(hid_t object, const std::string& name, std::uint64_t value,
                          const ReportedFile& file);
void write_double_attribute(hid_t object, const std::string& name, double value,
                            const ReportedFile& file);

// std::nullopt when the object has no attribute of that name.
std::optional<std::int64_t> read_int_attribute(hid_t object, const std::string& name,
                                               const ReportedFile& file);
std::optional<std::string> read_string_attribute(hid_t object, const std::string& name,
                                                 const ReportedFile& file);

}  // namespace lowcomm::log_detail
