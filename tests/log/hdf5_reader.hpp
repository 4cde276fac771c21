#pragma once
// Reads a log back with the plain HDF5 C API, independently of RunLog, so the tests check the
// file itself. Failures throw std::runtime_error naming the object.
#include <hdf5.h>

#include <cstdint>
#include <filesystem>
#include <type_traits>
#include <stdexcept>
#include <string>
#include <vector>

namespace lowcomm::test {

class Hdf5Object {
 public:
  Hdf5Object(hid_t id, herr_t (*closer)(hid_t), const std::string& what)
      : id_(id), closer_(closer) {
    if (id < 0) throw std::runtime_error("HDF5 failed: " + what);
  }
  Hdf5Object(const Hdf5Object&) = delete;
  Hdf5Object& operator=(const Hdf5Object&) = delete;
  ~Hdf5Object() { closer_(id_); }
  hid_t get() const { return id_; }

 private:
  hid_t id_;
  herr_t (*closer_)(hid_t);
};

// Opens read-only as an SWMR reader would: valid both for closed logs and for ones whose writer
// is still running or was killed.
inline Hdf5Object open_for_reading(const std::filesystem::path& path) {
  return Hdf5Object(H5Fopen(path.c_str(), H5F_ACC_RDONLY | H5F_ACC_SWMR_READ, H5P_DEFAULT),
                    H5Fclose, "open " + path.string());
}

inline std::vector<hsize_t> dataset_dims(hid_t file, const std::string& name) {
  const Hdf5Object dataset(H5Dopen2(file, name.c_str(), H5P_DEFAULT), H5Dclose, name);
  const Hdf5Object space(H5Dget_space(dataset.get()), H5Sclose, name);
  std::vector<hsize_t> dims(static_cast<std::size_t>(H5Sget_simple_extent_ndims(space.get())));
  H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
  return dims;
}

// The whole dataset, row-major.
template <class T>
std::vector<T> read_dataset(hid_t file, const std::string& name) {
  const Hdf5Object dataset(H5Dopen2(file, name.c_str(), H5P_DEFAULT), H5Dclose, name);
  std::size_t count = 1;
  for (hsize_t dim : dataset_dims(file, name)) count *= dim;
  std::vector<T> values(count);
  const hid_t type = std::is_same_v<T, double> ? H5T_NATIVE_DOUBLE : H5T_NATIVE_INT64;
  if (count > 0 &&
      H5Dread(dataset.get(), type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()) < 0) {
    throw std::runtime_error("HDF5 failed: read " + name);
  }
  return values;
}

inline bool has_attribute(hid_t object, const std::string& name) {
  return H5Aexists(object, name.c_str()) > 0;
}

template <class T>  // std::int64_t or std::uint64_t
T read_number_attribute(hid_t object, const std::string& name) {
  const Hdf5Object attribute(H5Aopen(object, name.c_str(), H5P_DEFAULT), H5Aclose, name);
  T value{};
  const hid_t type = std::is_same_v<T, std::int64_t> ? H5T_NATIVE_INT64 : H5T_NATIVE_UINT64;
  if (H5Aread(attribute.get(), type, &value) < 0) throw std::runtime_error("read " + name);
  return value;
}

// A scalar string attribute (one element) or a 1-D array of strings.
inline std::vector<std::string> read_strings_attribute(hid_t object, const std::string& name) {
  const Hdf5Object attribute(H5Aopen(object, name.c_str(), H5P_DEFAULT), H5Aclose, name);
  const Hdf5Object space(H5Aget_space(attribute.get()), H5Sclose, name);
  const Hdf5Object type(H5Tcopy(H5T_C_S1), H5Tclose, name);
  H5Tset_size(type.get(), H5T_VARIABLE);
  H5Tset_cset(type.get(), H5T_CSET_UTF8);
  std::vector<char*> data(static_cast<std::size_t>(H5Sget_simple_extent_npoints(space.get())));
  if (!data.empty() && H5Aread(attribute.get(), type.get(), data.data()) < 0) {
    throw std::runtime_error("read " + name);
  }
  std::vector<std::string> values(data.begin(), data.end());
  for (char* text : data) H5free_memory(text);
  return values;
}

inline std::string read_string_attribute(hid_t object, const std::string& name) {
  return read_strings_attribute(object, name).at(0);
}

}  // namespace lowcomm::test
