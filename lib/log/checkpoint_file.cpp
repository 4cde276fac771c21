#include "lowcomm/log/checkpoint_file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <span>
#include <string>
#include <system_error>
#include <vector>

#include "checksummed.hpp"
#include "hdf5_handle.hpp"
#include "whole_file.hpp"
#include "lowcomm/error.hpp"

namespace lowcomm {

using log_detail::check;
using log_detail::Hdf5Id;
using log_detail::ReportedFile;
using log_detail::SilenceHdf5Errors;
using log_detail::throw_log_error;
using log_detail::write_whole_file;

namespace {

constexpr std::string_view kKind = "checkpoint";

// Every entry is a 1-D dataset, chunked in pieces of at most 4 MiB and checksummed
// (checksummed.hpp); an empty one has nothing to protect and stays contiguous.
void write_dataset(hid_t root, hid_t link_properties, const std::string& key, hid_t type, hsize_t count,
                   const void* data, const ReportedFile& file) {
  const std::string what = fmt::format("cannot create entry '{}'", key);
  const Hdf5Id space(check(H5Screate_simple(1, &count, nullptr), file, what), H5Sclose);
  const hsize_t chunk = std::min<hsize_t>(count, hsize_t{1} << 20);
  const Hdf5Id creation(check(count == 0 ? H5Pcreate(H5P_DATASET_CREATE)
                                         : log_detail::checksummed_creation(std::span(&chunk, 1)),
                              file, what),
                        H5Pclose);
  const Hdf5Id set(check(H5Dcreate2(root, key.c_str(), type, space.get(), link_properties, creation.get(),
                                    H5P_DEFAULT),
                         file, what),
                   H5Dclose);
  check(H5Dwrite(set.get(), type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), file,
        fmt::format("cannot write entry '{}'", key), "check the free disk space");
}

struct Reader {
  const ReportedFile& file;
  StateDict& state;
  bool floats;
  std::string error;  // set by visit() on a malformed entry
};

herr_t visit(hid_t root, const char* name, const H5O_info_t* info, void* data) {
  auto& reader = *static_cast<Reader*>(data);
  if (info->type != H5O_TYPE_DATASET || std::string_view(name) == ".") return 0;
  const hid_t set = H5Dopen2(root, name, H5P_DEFAULT);
  if (set < 0) {
    reader.error = fmt::format("cannot open entry '{}'", name);
    return -1;
  }
  const Hdf5Id owned(set, H5Dclose);
  const Hdf5Id space(H5Dget_space(set), H5Sclose);
  const Hdf5Id type(H5Dget_type(set), H5Tclose);
  const int rank = H5Sget_simple_extent_ndims(space.get());
  const H5T_class_t type_class = H5Tget_class(type.get());
  if (reader.floats) {
    if (rank != 1 || type_class != H5T_FLOAT) {
      reader.error = fmt::format("entry floats/{} is not a 1-D floating-point dataset", name);
      return -1;
    }
    std::vector<float> values(static_cast<std::size_t>(H5Sget_simple_extent_npoints(space.get())));
    if (H5Dread(set, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()) < 0) {
      reader.error = fmt::format("cannot read entry floats/{} (HDF5: {}); {}", name, log_detail::hdf5_error_cause(),
                                 log_detail::kChecksumAdvice);
      return -1;
    }
    reader.state.put(name, values);
  } else {
    // One value: a 1-element dataset (checksummed), or a scalar (checkpoints of lowcomm 0.1).
    const bool one = rank == 0 || (rank == 1 && H5Sget_simple_extent_npoints(space.get()) == 1);
    if (!one || type_class != H5T_INTEGER) {
      reader.error = fmt::format("entry integers/{} is not a single integer", name);
      return -1;
    }
    std::int64_t value = 0;
    if (H5Dread(set, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, &value) < 0) {
      reader.error = fmt::format("cannot read entry integers/{} (HDF5: {}); {}", name,
                                 log_detail::hdf5_error_cause(), log_detail::kChecksumAdvice);
      return -1;
    }
    reader.state.put(name, value);
  }
  return 0;
}

}  // namespace

void write_checkpoint(const std::filesystem::path& path, const StateDict& state) {
  write_whole_file(path, kKind, [&](hid_t h5, const ReportedFile& file) {
    const Hdf5Id links(H5Pcreate(H5P_LINK_CREATE), H5Pclose);
    H5Pset_create_intermediate_group(links.get(), 1);
    const Hdf5Id floats(check(H5Gcreate2(h5, "floats", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), file,
                              "cannot create group floats"),
                        H5Gclose);
    const Hdf5Id integers(check(H5Gcreate2(h5, "integers", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), file,
                                "cannot create group integers"),
                          H5Gclose);
    for (const std::string& key : state.keys()) {
      if (key.empty() || key.front() == '/' || key.back() == '/' || key.find("//") != std::string::npos) {
        throw LogError(fmt::format("checkpoint {}: state key '{}' is not a valid path", path.string(), key));
      }
    }
    for (const std::string& key : state.float_keys()) {
      const std::vector<float>& values = state.floats(key);
      write_dataset(floats.get(), links.get(), key, H5T_NATIVE_FLOAT, values.size(), values.data(), file);
    }
    for (const std::string& key : state.integer_keys()) {
      const std::int64_t value = state.integer(key);
      write_dataset(integers.get(), links.get(), key, H5T_NATIVE_INT64, 1, &value, file);
    }
  });
}

StateDict read_checkpoint(const std::filesystem::path& path) {
  const SilenceHdf5Errors silence;
  const ReportedFile file(path, kKind);
  std::error_code error;
  if (!std::filesystem::exists(path, error)) {
    throw LogError(fmt::format("checkpoint {}: no such file", path.string()));
  }
  const Hdf5Id h5(check(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), file, "cannot open it as HDF5",
                        "is it a lowcomm checkpoint?"),
                  H5Fclose);
  StateDict state;
  for (const bool floats : {true, false}) {
    const char* group_name = floats ? "floats" : "integers";
    const hid_t group = H5Gopen2(h5.get(), group_name, H5P_DEFAULT);
    if (group < 0) throw_log_error(file, fmt::format("no group /{}", group_name), "is it a lowcomm checkpoint?");
    const Hdf5Id owned(group, H5Gclose);
    Reader reader{file, state, floats, {}};
    if (H5Ovisit2(group, H5_INDEX_NAME, H5_ITER_INC, visit, &reader, H5O_INFO_BASIC) < 0) {
      throw_log_error(file, reader.error.empty() ? "cannot list its entries" : reader.error);
    }
  }
  return state;
}

}  // namespace lowcomm
