#include "array_datasets.hpp"

#include <fmt/format.h>

#include "hdf5_attributes.hpp"
#include "lowcomm/error.hpp"

namespace lowcomm::log_detail {

namespace {

std::string_view type_name(ArrayType type) {
  switch (type) {
    case ArrayType::Float32: return "Float32";
    case ArrayType::Float64: return "Float64";
    case ArrayType::Int64: return "Int64";
  }
  return "?";
}

hid_t file_type(ArrayType type) {
  switch (type) {
    case ArrayType::Float32: return H5T_IEEE_F32LE;
    case ArrayType::Float64: return H5T_IEEE_F64LE;
    case ArrayType::Int64: return H5T_STD_I64LE;
  }
  return H5T_STD_I64LE;
}

hid_t memory_type(ArrayType type) {
  switch (type) {
    case ArrayType::Float32: return H5T_NATIVE_FLOAT;
    case ArrayType::Float64: return H5T_NATIVE_DOUBLE;
    case ArrayType::Int64: return H5T_NATIVE_INT64;
  }
  return H5T_NATIVE_INT64;
}

}  // namespace

ArrayDataset ArrayDataset::create(hid_t file, const ArraySchema& schema, const std::filesystem::path& path) {
  ArrayDataset array(schema, path);
  const std::string what = fmt::format("cannot create array {}", schema.name);
  const std::vector<hsize_t> dims(schema.shape.begin(), schema.shape.end());
  const Hdf5Id space(check(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), path, what),
                     H5Sclose);
  // Groups on the way ("params/") come from the link-creation properties.
  const Hdf5Id links(check(H5Pcreate(H5P_LINK_CREATE), path, what), H5Pclose);
  check(H5Pset_create_intermediate_group(links.get(), 1), path, what);
  array.dataset_ = Hdf5Id(check(H5Dcreate2(file, schema.name.c_str(), file_type(schema.type), space.get(),
                                           links.get(), H5P_DEFAULT, H5P_DEFAULT),
                                path, what),
                          H5Dclose);
  write_string_attribute(array.dataset_.get(), "unit", schema.unit, path);
  write_string_attribute(array.dataset_.get(), "description", schema.description, path);
  return array;
}

void ArrayDataset::write(std::span<const std::uint64_t> leading, ArrayType type, const void* data,
                         std::size_t elements) {
  const std::vector<std::uint64_t>& dims = schema_.shape;
  if (type != schema_.type) {
    throw LogError(fmt::format("run log {}: array '{}' holds {}, not {}", path_.string(), schema_.name,
                               type_name(schema_.type), type_name(type)));
  }
  if (leading.size() > dims.size()) {
    throw LogError(fmt::format("run log {}: array '{}' has {} dimensions, not {}", path_.string(), schema_.name,
                               dims.size(), leading.size()));
  }
  std::vector<hsize_t> start(dims.size(), 0), count(dims.begin(), dims.end());
  std::size_t block = 1;
  for (std::size_t d = 0; d < dims.size(); ++d) {
    if (d < leading.size()) {
      if (leading[d] >= dims[d]) {
        throw LogError(fmt::format("run log {}: index {} of array '{}' is {}; its extent is {}", path_.string(), d,
                                   schema_.name, leading[d], dims[d]));
      }
      start[d] = leading[d];
      count[d] = 1;
    }
    block *= count[d];
  }
  if (elements != block) {
    throw LogError(fmt::format("run log {}: a block of array '{}' holds {} values, not {}", path_.string(),
                               schema_.name, block, elements));
  }
  const std::string what = fmt::format("cannot write array {}", schema_.name);
  const Hdf5Id space(check(H5Dget_space(dataset_.get()), path_, what), H5Sclose);
  check(H5Sselect_hyperslab(space.get(), H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr), path_, what);
  const hsize_t flat = block;
  const Hdf5Id memory(check(H5Screate_simple(1, &flat, nullptr), path_, what), H5Sclose);
  check(H5Dwrite(dataset_.get(), memory_type(type), memory.get(), space.get(), H5P_DEFAULT, data), path_, what);
}

}  // namespace lowcomm::log_detail
